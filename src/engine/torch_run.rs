//! A PyTorch run of several ranks ([`crate::analysis::torch::ranks`]): each Kineto trace of the run a
//! rank, its worker the file's host (`<run>/<worker>.<span>.pt.trace.json.gz`), its rank its trace's
//! `distributedInfo.rank`. Computed from the traces the session holds, as the single-rank views are.

use super::{EngineError, Session};
pub use crate::analysis::torch::ranks::TorchRun;
use crate::analysis::torch::ranks::{combine, rank_figures, RankFigures};
use crate::analysis::torch::TorchProfile;
use crate::decode::{Format, Profile};

const TOOL: &str = "PyTorch run";

impl Session {
    /// The PyTorch run of the Kineto traces `file_ids` (its ranks, one file each): every rank's step
    /// split, operators and kernels, and the run combined.
    pub fn torch_run(&self, file_ids: &[u32]) -> Result<TorchRun, EngineError> {
        let ranks = file_ids.iter().map(|&id| self.torch_rank(id)).collect::<Result<Vec<RankFigures>, EngineError>>()?;
        combine(ranks).map_err(|e| match file_ids.first() {
            Some(&id) => self.unsupported(id, TOOL, e.to_string()),
            None => EngineError::EmptyRun,
        })
    }

    /// Whether every file of `file_ids` is a Kineto trace (a run of PyTorch ranks), from what the
    /// session knows of each without its bytes.
    pub fn is_torch_run(&self, file_ids: &[u32]) -> Result<bool, EngineError> {
        let mut all = !file_ids.is_empty();
        for &id in file_ids {
            all &= self.overview(id)?.format == Format::Kineto;
        }
        Ok(all)
    }

    fn torch_rank(&self, id: u32) -> Result<RankFigures, EngineError> {
        let f = self.file(id)?;
        let Profile::Kineto(trace) = &f.file.profile else {
            return Err(EngineError::WrongFormat {
                file: f.file.name.clone(),
                tool: TOOL.into(),
                found: f.file.profile.format(),
                needs: "a PyTorch profiler trace (*.pt.trace.json[.gz] from torch.profiler), one per rank".into(),
            });
        };
        Ok(rank_figures(&TorchProfile::new(trace), &f.overview.run_host.host))
    }
}
