/* The floor of a CLI turn for scripts/bench.sh: the least a program can do to run an agent
 * CLI once, in C with no library but libc. It spawns the agent with pipes on its stdin and
 * stdout, writes the prompt and closes stdin, copies the agent's output to its own stdout,
 * and exits with the agent's status. agent-loop does all of that and more (reads its
 * configuration, strips, parses and prints), so the time this takes over the agent run
 * directly is the part of agent-loop's own overhead that process start-up, the pipes and the
 * wake-ups of this machine cost any wrapper. Usage: wrap AGENT PROMPT */
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv) {
    if (argc != 3) return 2;
    int in[2], out[2];
    if (pipe(in) || pipe(out)) return 1;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    /* The agent keeps only its stdin and stdout of the pipes. */
    posix_spawn_file_actions_addclose(&actions, in[0]);
    posix_spawn_file_actions_addclose(&actions, in[1]);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    posix_spawn_file_actions_addclose(&actions, out[1]);
    char *args[] = {argv[1], NULL};
    pid_t pid;
    if (posix_spawn(&pid, argv[1], &actions, NULL, args, environ)) return 1;
    close(in[0]);
    close(out[1]);
    if (write(in[1], argv[2], strlen(argv[2])) < 0) return 1;
    close(in[1]);
    char buf[65536];
    ssize_t n;
    while ((n = read(out[0], buf, sizeof buf)) > 0) {
        if (write(1, buf, (size_t)n) != n) return 1;
    }
    int status;
    if (waitpid(pid, &status, 0) < 0) return 1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
