//! `--step N` of the op tables (`framework-op-stats`, `hlo-stats`, `op-profile`, `kernel-stats`,
//! `roofline-model`): the table limited to the events that start inside step N's span (Tidemark's own;
//! XProf has no such option and its tables cover the whole trace).

use crate::args::OpenedRun;
use tidemark::analysis::op_metrics::TimeWindow;

/// A step the table is limited to: its group id, name and span.
pub struct StepWindow {
    pub group_id: i64,
    pub name: String,
    pub window: TimeWindow,
}

impl StepWindow {
    /// The line the readable output begins with.
    pub fn line(&self) -> String {
        format!(
            "step {} ({}): only the events starting in [{}, {}) ps, a {:.3} ms window (Tidemark's own; XProf's table covers the whole trace)\n",
            self.group_id,
            self.name,
            self.window.begin_ps(),
            self.window.end_ps(),
            self.window.duration_ms()
        )
    }
}

/// The step `--step N` names (N: its group id, as the page's URL `step=N` and the Overview's step
/// selection name it), `None` without the option; after printing why, the exit status when N is no
/// number (2) or no step of the run (1).
pub fn step_window(run: &mut OpenedRun, command: &str, usage: &str) -> Result<Option<StepWindow>, i32> {
    let Some(text) = run.args.option("step") else { return Ok(None) };
    let Ok(group_id) = text.parse::<i64>() else {
        eprintln!("tidemark {command}: --step takes a step's number (its group id), not `{text}`\n{usage}");
        return Err(2);
    };
    let steps = run.session.run_step_windows(&run.ids).map_err(|e| {
        eprintln!("tidemark: {e}");
        1
    })?;
    match steps.into_iter().find(|(id, _, _)| *id == group_id) {
        Some((group_id, name, window)) => Ok(Some(StepWindow { group_id, name, window })),
        None => {
            let known: Vec<String> =
                run.session.run_step_windows(&run.ids).unwrap_or_default().iter().map(|(id, _, _)| id.to_string()).collect();
            let known = if known.is_empty() { "it has no steps".to_string() } else { format!("its steps are {}", known.join(", ")) };
            eprintln!("tidemark {command}: {} has no step {group_id}; {known}", run.name);
            Err(1)
        }
    }
}
