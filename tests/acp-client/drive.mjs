// A scripted ACP client on the official SDK (@agentclientprotocol/sdk), for the tests of
// `agent-loop acp` (tests/all/acp_server/). Usage: node drive.mjs SCRIPT.json -- AGENT ARGS...
// It starts the agent, runs the script's steps in order and prints one JSON object: each
// step's result, every session/update, permission request and fs call the agent made, and
// every line the agent wrote on stdout (checked to be JSON-RPC by the tests).
//
// Steps: {op:"initialize", fs? (true, "read" or "write": what it offers), terminal?}, {op:"new", cwd, mcpServers?}, {op:"load",
// sessionId or session, cwd}, {op:"prompt", session, text, repeat?=1 (times the text), wait?=true}, {op:"await", session or key},
// {op:"close", session, wait?=true, key?} (not waited for: its answer awaited by `key`), {op:"setMode", session, mode}, {op:"setConfig", session, value} (the
// backend), {op:"waitGone", pidFile} (every pid the file lists has exited), {op:"alive",
// pidFile} (whether every one still runs),
// {op:"waitUpdate", kind}, {op:"waitPermission"}, {op:"waitTerminal"} (one was created),
// {op:"waitTerminalCall", method} (the agent called terminal/METHOD), {op:"waitFile", path}, {op:"cancel", session},
// {op:"request", method, params}, {op:"raw", line}, {op:"signal", signal} (sent to the agent). `session` is the index of a session
// opened by an earlier step. Permission requests are answered with `permission` (an option
// id, or "cancelled") from the script, after `holdPermission` waits if set. With `terminal`
// offered it runs terminal/create's command itself (in a process group of its own, output
// kept to outputByteLimit from the end, as the spec asks) and records every terminal call
// (a create with the pid it started); `holdTerminal` answers terminal/create only after a
// cancel.
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const [scriptPath, dashdash, command, ...args] = process.argv.slice(2);
if (dashdash !== "--") throw new Error("usage: drive.mjs SCRIPT.json -- AGENT ARGS...");
const script = JSON.parse(readFileSync(scriptPath, "utf8"));

const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
const agentLines = [];
let partial = "";
child.stdout.on("data", (chunk) => {
  partial += chunk.toString("utf8");
  const lines = partial.split("\n");
  partial = lines.pop();
  agentLines.push(...lines);
});
const input = Readable.toWeb(child.stdout);
const output = Writable.toWeb(child.stdin);

const updates = [];
const permissions = [];
const fsCalls = [];
const terminalCalls = [];
const terminals = new Map();
const waiters = [];
const now = () => Number(process.hrtime.bigint() / 1000000n);
function wake() {
  for (const w of waiters.splice(0)) if (!w()) waiters.push(w);
}
// A wait that is never met fails the run (the test then shows what was awaited) instead of
// hanging it; the limit is far beyond any machine's slowness, a guard, not a timing.
const WAIT_LIMIT_MS = 120000;
// A process that has exited: no longer listed, or a zombie not yet reaped.
function gone(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return true;
  }
}
function until(check) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`drive.mjs: waited ${WAIT_LIMIT_MS / 1000} s for ${check}`)),
      WAIT_LIMIT_MS,
    );
    const w = () => {
      const v = check();
      if (v) {
        clearTimeout(timer);
        resolve(v);
      }
      return v;
    };
    if (!w()) waiters.push(w);
  });
}

const app = acp
  .client({ name: "agent-loop-tests" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    updates.push({ ...params, at: now() });
    wake();
  })
  .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
    permissions.push(params);
    wake();
    if (script.holdPermission) await until(() => cancelled);
    const choice = script.permission ?? "allow-once";
    if (choice === "cancelled" || cancelled) return { outcome: { outcome: "cancelled" } };
    return { outcome: { outcome: "selected", optionId: choice } };
  })
  .onRequest(acp.methods.client.fs.readTextFile, async ({ params }) => {
    fsCalls.push({ method: "read", ...params });
    return { content: readFileSync(params.path, "utf8") };
  })
  .onRequest(acp.methods.client.fs.writeTextFile, async ({ params }) => {
    fsCalls.push({ method: "write", ...params });
    writeFileSync(params.path, params.content);
    return {};
  })
  .onRequest(acp.methods.client.terminal.create, async ({ params }) => {
    const call = { method: "create", ...params };
    terminalCalls.push(call);
    wake();
    if (script.holdTerminal) await until(() => cancelled);
    const id = `term-${terminals.size + 1}`;
    const env = { ...process.env };
    for (const v of params.env ?? []) env[v.name] = v.value;
    const proc = spawn(params.command, params.args ?? [], {
      cwd: params.cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: true,
    });
    const t = { proc, output: Buffer.alloc(0), truncated: false, exit: null };
    const add = (chunk) => {
      t.output = Buffer.concat([t.output, chunk]);
      const limit = params.outputByteLimit;
      if (limit != null && t.output.length > limit) {
        t.output = t.output.subarray(t.output.length - limit);
        t.truncated = true;
      }
    };
    proc.stdout.on("data", add);
    proc.stderr.on("data", add);
    t.exited = new Promise((resolve) =>
      proc.on("close", (exitCode, signal) => {
        t.exit = { exitCode, signal };
        resolve(t.exit);
      }),
    );
    call.pid = proc.pid;
    terminals.set(id, t);
    wake();
    return { terminalId: id };
  })
  .onRequest(acp.methods.client.terminal.output, async ({ params }) => {
    terminalCalls.push({ method: "output", ...params });
    const t = terminals.get(params.terminalId);
    return { output: t.output.toString("utf8"), truncated: t.truncated, exitStatus: t.exit };
  })
  .onRequest(acp.methods.client.terminal.waitForExit, async ({ params }) => {
    terminalCalls.push({ method: "wait_for_exit", ...params });
    return await terminals.get(params.terminalId).exited;
  })
  .onRequest(acp.methods.client.terminal.kill, async ({ params }) => {
    terminalCalls.push({ method: "kill", ...params });
    killTerminal(terminals.get(params.terminalId));
    return {};
  })
  .onRequest(acp.methods.client.terminal.release, async ({ params }) => {
    terminalCalls.push({ method: "release", ...params });
    killTerminal(terminals.get(params.terminalId));
    wake();
    return {};
  });

function killTerminal(t) {
  if (t.exit) return;
  try {
    process.kill(-t.proc.pid, "SIGKILL");
  } catch {}
}

let cancelled = false;
const results = [];
const sessions = [];
const pending = new Map();

await app.connectWith(acp.ndJsonStream(output, input), async (agent) => {
  const call = (method, params) =>
    agent.request(method, params).then(
      (result) => ({ result }),
      (error) => ({ error: { code: error.code, message: error.message, data: error.data } }),
    );
  for (const step of script.steps) {
    switch (step.op) {
      case "initialize": {
        const r = await call("initialize", {
          protocolVersion: step.protocolVersion ?? acp.PROTOCOL_VERSION,
          clientCapabilities: {
            fs: {
              readTextFile: step.fs === true || step.fs === "read",
              writeTextFile: step.fs === true || step.fs === "write",
            },
            terminal: !!step.terminal,
          },
        });
        results.push(r);
        break;
      }
      case "new": {
        const r = await call("session/new", { cwd: step.cwd, mcpServers: step.mcpServers ?? [] });
        if (r.result) sessions.push(r.result.sessionId);
        results.push(r);
        break;
      }
      case "load": {
        const sessionId = step.sessionId ?? sessions[step.session];
        const r = await call("session/load", { sessionId, cwd: step.cwd, mcpServers: [] });
        if (r.result) sessions.push(sessionId);
        results.push(r);
        break;
      }
      case "prompt": {
        const sessionId = sessions[step.session] ?? step.sessionId;
        const started = now();
        const p = call("session/prompt", {
          sessionId,
          prompt: step.prompt ?? [{ type: "text", text: step.text.repeat(step.repeat ?? 1) }],
        }).then((r) => ({ ...r, ms: now() - started, answeredAt: now() }));
        if (step.wait === false) {
          pending.set(step.session, p);
          results.push({ queued: true });
        } else results.push(await p);
        break;
      }
      case "await":
        results.push(await pending.get(step.key ?? step.session));
        break;
      case "close": {
        const p = call("session/close", { sessionId: sessions[step.session] });
        if (step.wait === false) {
          pending.set(step.key ?? `close ${step.session}`, p);
          results.push({ queued: true });
        } else results.push(await p);
        break;
      }
      case "setConfig":
        results.push(await call("session/set_config_option", {
          sessionId: sessions[step.session], configId: "backend", value: step.value,
        }));
        break;
      case "alive": {
        const pids = readFileSync(step.pidFile, "utf8").trim().split(/\s+/).map(Number);
        results.push({ alive: pids.every((pid) => !gone(pid)), pids });
        break;
      }
      case "setMode":
        results.push(await call("session/set_mode", { sessionId: sessions[step.session], modeId: step.mode }));
        break;
      case "waitGone": {
        const pids = readFileSync(step.pidFile, "utf8").trim().split(/\s+/).map(Number);
        const started = now();
        while (!pids.every(gone)) {
          if (now() - started > WAIT_LIMIT_MS) throw new Error(`drive.mjs: ${pids} still run`);
          await new Promise((r) => setTimeout(r, 10));
        }
        results.push({ ok: true, pids });
        break;
      }
      case "waitUpdate":
        await until(() => updates.some((u) => u.update.sessionUpdate === step.kind));
        results.push({ ok: true });
        break;
      case "waitTerminal":
        await until(() => terminals.size > 0);
        results.push({ ok: true });
        break;
      case "waitTerminalCall":
        await until(() => terminalCalls.some((c) => c.method === step.method));
        results.push({ ok: true });
        break;
      case "waitPermission":
        await until(() => permissions.length > 0);
        results.push({ ok: true });
        break;
      case "waitFile":
        // The fake agent's sign that it runs (the turn has reached the backend).
        while (!existsSync(step.path)) await new Promise((r) => setTimeout(r, 10));
        results.push({ ok: true });
        break;
      case "cancel":
        cancelled = true;
        wake();
        await agent.notify("session/cancel", { sessionId: sessions[step.session] });
        results.push({ cancelledAt: now() });
        break;
      case "request":
        results.push(await call(step.method, step.params ?? {}));
        break;
      case "signal":
        // As an editor stops its agent.
        process.kill(child.pid, step.signal);
        results.push({ ok: true });
        break;
      case "raw":
        child.stdin.write(step.line + "\n");
        results.push({ ok: true });
        break;
      default:
        throw new Error(`unknown step ${step.op}`);
    }
  }
});
child.stdin.end();
await new Promise((resolve) => child.on("close", resolve));
if (partial) agentLines.push(partial);
process.stdout.write(
  JSON.stringify({
    results, sessions, updates, permissions, fsCalls, terminalCalls, agentLines,
    exitCode: child.exitCode,
  }) + "\n",
);
