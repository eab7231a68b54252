//! The command line of a CLI backend: `args`, then `loop_args` when agent-loop runs the
//! tools, then `model_args` when a model is set, with the placeholders filled in.
//!
//! `model_args` is an optional group: a preset can name its CLI's model flag
//! (`model_args = ["--model", "{model}"]`) and still run the CLI's own default model when
//! neither `model` nor `--model` gives one, instead of passing an empty model. `loop_args`
//! holds the flags that turn the CLI's own tools off; a user entry with `tools = "own"`
//! drops them without having to rewrite `args`.

use std::path::Path;

use super::BackendDef;
use super::ConfigError;

impl BackendDef {
    /// The arguments before the placeholders are filled in, in the order they are passed.
    pub fn arg_template(&self) -> impl Iterator<Item = &String> {
        let loop_args = (!self.style.own_tools).then_some(&self.loop_args);
        let model_args = self.model.is_some().then_some(&self.model_args);
        self.args
            .iter()
            .chain(loop_args.into_iter().flatten())
            .chain(model_args.into_iter().flatten())
    }

    /// The arguments of one run: `{prompt}`, `{prompt_file}`, `{model}` and `{cwd}` replaced.
    /// `{model}` in `args` (not in `model_args`) needs a model.
    pub fn expand_args(
        &self,
        prompt: &str,
        prompt_file: Option<&str>,
        cwd: &Path,
    ) -> Result<Vec<String>, ConfigError> {
        if self.model.is_none() && self.args.iter().any(|a| a.contains("{model}")) {
            return Err(ConfigError::NoModel {
                backend: self.name.clone(),
                at: self.defined_at.clone(),
            });
        }
        let model = self.model.as_deref().unwrap_or("");
        let cwd = cwd.display().to_string();
        Ok(self
            .arg_template()
            .map(|arg| {
                arg.replace("{prompt_file}", prompt_file.unwrap_or(""))
                    .replace("{prompt}", prompt)
                    .replace("{model}", model)
                    .replace("{cwd}", &cwd)
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use crate::{Config, Definition, Source};
    use std::path::Path;

    fn def(entry: &str) -> crate::BackendDef {
        let config = Config::from_sources(&[Source {
            name: "t.toml".into(),
            text: format!("[backends.a]\ncommand = \"a\"\n{entry}"),
        }])
        .unwrap();
        let Definition::Cli(d) = config.backend("a").unwrap().clone() else {
            panic!("a CLI")
        };
        d
    }

    fn args(d: &crate::BackendDef) -> Vec<String> {
        d.expand_args("P", None, Path::new("/w")).unwrap()
    }

    #[test]
    fn model_args_only_with_a_model_loop_args_only_in_loop_mode() {
        let mut d = def(
            "args = [\"-p\", \"{prompt}\"]\nloop_args = [\"--tools\", \"\"]\nmodel_args = [\"--model\", \"{model}\"]\n",
        );
        assert_eq!(args(&d), ["-p", "P", "--tools", ""]);
        d.model = Some("m1".into());
        assert_eq!(args(&d), ["-p", "P", "--tools", "", "--model", "m1"]);
        let mut own = def("tools = \"own\"\nloop_args = [\"--tools\", \"\"]\nmodel = \"m2\"\nmodel_args = [\"-m\", \"{model}\"]\n");
        assert_eq!(args(&own), ["-m", "m2"]);
        own.model = None;
        assert!(args(&own).is_empty());
    }

    #[test]
    fn model_in_args_still_needs_a_model() {
        let d = def("args = [\"run\", \"{model}\"]\n");
        let err = d
            .expand_args("P", None, Path::new("/w"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("no model is set") && err.contains("model_args"),
            "{err}"
        );
    }

    #[test]
    fn a_prompt_placeholder_in_the_optional_groups_counts() {
        let d = def("model_args = [\"--prompt-file\", \"{prompt_file}\"]\n");
        assert_eq!(d.prompt_via, crate::PromptVia::File);
    }
}
