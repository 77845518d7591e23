//! What `verify`, `stitch` and `cut` answer with `--json`: typed, so that the command line
//! only fills and prints them.

use serde::{Deserialize, Serialize};

use crate::check::{Report, VerifyError};

/// `verify --json` of a certificate the checker read through: what it holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CertificateChecked {
    /// The file, as given.
    pub certificate: String,
    /// It proves its claim: no open leaf is left (a partial one holds only if they do).
    pub ok: bool,
    /// The file's size.
    pub bytes: u64,
    #[serde(flatten)]
    pub report: Report,
}

impl CertificateChecked {
    pub fn new(certificate: String, bytes: u64, report: Report) -> CertificateChecked {
        CertificateChecked {
            certificate,
            ok: report.open_leaves == 0,
            bytes,
            report,
        }
    }
}

/// `verify --json` of a certificate the checker refused: why, and on which line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CertificateRefused {
    pub certificate: String,
    /// Always false: kept so that both answers of `verify` say `ok`.
    pub ok: bool,
    pub error: Refusal,
    /// 0 when the file could not be opened at all.
    pub line: u64,
    pub reason: String,
}

/// Why the checker refused a certificate: its exit status 1 or 2.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Refusal {
    Wrong,
    Unreadable,
}

impl CertificateRefused {
    pub fn new(certificate: String, e: &VerifyError) -> CertificateRefused {
        CertificateRefused {
            certificate,
            ok: false,
            error: match e {
                VerifyError::Wrong { .. } => Refusal::Wrong,
                VerifyError::Unreadable { .. } => Refusal::Unreadable,
            },
            line: e.line(),
            reason: e.reason().to_string(),
        }
    }
}

/// `stitch --json`: the open leaves closed and left, and the checker's word on the result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CertificateStitched {
    /// The file written.
    pub certificate: String,
    pub closed: u64,
    pub open: u64,
    pub nodes: u64,
    pub bytes: u64,
    pub verified: bool,
    /// Open leaves are left: the result is a partial certificate still.
    pub partial: bool,
    pub verify_error: Option<String>,
}

/// `cut --json`: the certificate of a position inside another, and the checker's word on it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CertificateCut {
    /// The file written.
    pub certificate: String,
    /// Its root.
    pub position: String,
    pub nodes: u64,
    /// Shared subtrees from outside the cut copied in.
    pub copied_subtrees: u64,
    pub bytes: u64,
    pub open_leaves: u64,
    pub verified: bool,
    pub verify_error: Option<String>,
}
