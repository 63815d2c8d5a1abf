//! The runs of the loaded files (the folders they lie in) and their hosts: what the host selector,
//! the Run comparison and the op tools' "all hosts" read. Derived from the file list's paths each
//! time, so it never goes stale as files load.

use super::AppState;
use leptos::prelude::*;

impl AppState {
    /// The runs of the loaded files (the folders they lie in, [`crate::decode::log_dir::RunHost`]) as
    /// (run folder, run name), newest first: by name, which TensorBoard makes a timestamp, descending.
    pub fn runs(&self) -> Vec<(String, String)> {
        let mut runs: Vec<(String, String)> = self.files.with(|fs| {
            fs.iter()
                .map(|f| {
                    let rh = crate::decode::log_dir::run_host(&f.path);
                    (rh.run_dir, rh.run)
                })
                .collect()
        });
        runs.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| b.0.cmp(&a.0)));
        runs.dedup();
        runs
    }

    /// The files of run folder `run_dir` as (path, host), in path order (the order XProf combines
    /// hosts in).
    pub fn run_files(&self, run_dir: &str) -> Vec<(String, String)> {
        let mut files: Vec<(String, String)> = self.files.with(|fs| {
            fs.iter()
                .filter_map(|f| {
                    let rh = crate::decode::log_dir::run_host(&f.path);
                    (rh.run_dir == run_dir).then(|| (f.path.clone(), rh.host))
                })
                .collect()
        });
        files.sort();
        files
    }

    /// The engine ids of the ready files of the selected file's run, in path order: what "all
    /// hosts" combines.
    pub fn selected_run_ids(&self) -> Vec<u32> {
        self.run_ids(&self.selected_run_dir())
    }

    /// The run folder of the selected file.
    pub fn selected_run_dir(&self) -> String {
        self.selected.with(|p| p.as_deref().map(|p| crate::decode::log_dir::run_host(p).run_dir)).unwrap_or_default()
    }

    /// The engine ids of the ready files of run folder `run_dir`, in path order.
    pub fn run_ids(&self, run_dir: &str) -> Vec<u32> {
        let paths = self.run_files(run_dir);
        let ready = self.ready_files();
        paths.iter().filter_map(|(p, _)| ready.iter().find(|(_, rp)| rp == p).map(|(id, _)| *id)).collect()
    }

    /// With "all hosts" chosen and the selected file's run holding several ready hosts, their ids
    /// ([`AppState::selected_run_ids`]): what the op tools combine; else `None` (the selected file).
    pub fn all_hosts_ids(&self) -> Option<Vec<u32>> {
        if !self.all_hosts.get() {
            return None;
        }
        let ids = self.selected_run_ids();
        (ids.len() > 1).then_some(ids)
    }

    /// What the op tools of file `file_id` read: the run's hosts combined as XProf combines them
    /// ([`AppState::all_hosts_ids`]), else the file alone.
    pub fn op_file_ids(&self, file_id: u32) -> Vec<u32> {
        self.all_hosts_ids().unwrap_or_else(|| vec![file_id])
    }
}
