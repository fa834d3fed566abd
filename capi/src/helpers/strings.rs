//! The `*_string` calls OpenPMIx 5.0 and 6.1 added, and `PMIx_Error_code`, the reverse of
//! a status's name. Static texts are the library's for the process's life; the others are
//! libc's, for the caller to free.

use std::ffi::{c_char, c_int};
use std::ptr;

use pmix::model::Status;

use crate::args::{In, Str};
use crate::boundary::{c_strdup, guard_or, interned, read_fixed};
use crate::types::{CApp, CProc, CResourceUnit, CStatus};

/// `PMIx_Error_code`: the status a name (`PMIX_ERR_NOT_FOUND`, in any case) stands for;
/// `INT32_MIN` for a name the standard does not give (or NULL).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Error_code(errname: Str<'_>) -> CStatus {
    guard_or("PMIx_Error_code", CStatus::MIN, || {
        let Some(name) = errname.text() else {
            return CStatus::MIN;
        };
        Status::from_name(&name.to_ascii_uppercase()).map_or(CStatus::MIN, |s| s.0)
    })
}

/// `PMIx_Group_operation_string`: `pmix_group_operation_t`'s values by name.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Group_operation_string(op: c_int) -> *const c_char {
    guard_or("PMIx_Group_operation_string", ptr::null(), || {
        interned(match op {
            0 => "CONSTRUCT",
            1 => "DESTRUCT",
            2 => "NONE",
            _ => "UNKNOWN VALUE",
        })
    })
}

/// `PMIx_Resource_block_directive_string`: OpenPMIx 6.1's resource-block directives.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Resource_block_directive_string(directive: u8) -> *const c_char {
    guard_or("PMIx_Resource_block_directive_string", ptr::null(), || {
        interned(match directive {
            1 => "DEFINE",
            2 => "EXTEND",
            3 => "REMOVE",
            4 => "DELETE",
            _ => "UNSPECIFIED",
        })
    })
}

/// `proc` as `[nspace,rank]`, a special rank by its short name (`WILDCARD`).
fn proc_text(proc: Option<&CProc>) -> String {
    let Some(p) = proc else {
        return "[NO-NAME]".to_owned();
    };
    let rank = pmix::model::Rank(p.rank);
    let rank = match rank.special_name() {
        Some(name) => name.trim_start_matches("PMIX_RANK_").to_owned(),
        None => p.rank.to_string(),
    };
    format!("[{},{rank}]", read_fixed(&p.nspace))
}

/// `PMIx_Proc_string`: `[nspace,rank]`, libc's (the caller frees it).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Proc_string(proc: In<'_, CProc>) -> *mut c_char {
    guard_or("PMIx_Proc_string", ptr::null_mut(), || {
        c_strdup(proc_text(proc.get())).unwrap_or(ptr::null_mut())
    })
}

/// `PMIx_App_string`: an application on several lines (command, arguments, environment,
/// working directory, process count, information), libc's (the caller frees it).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_App_string(app: In<'_, CApp>) -> *mut c_char {
    guard_or("PMIx_App_string", ptr::null_mut(), || match app.text() {
        Some(text) => c_strdup(&text).unwrap_or(ptr::null_mut()),
        None => ptr::null_mut(),
    })
}

/// `PMIx_Resource_unit_string`: `TYPE: <device type>  COUNT: <n>`, libc's.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Resource_unit_string(unit: In<'_, CResourceUnit>) -> *mut c_char {
    guard_or("PMIx_Resource_unit_string", ptr::null_mut(), || {
        let Some(unit) = unit.get() else {
            return ptr::null_mut();
        };
        let kind = pmix::model::strings::device_type_string(pmix::model::DeviceType(unit.type_));
        c_strdup(format!("TYPE: {kind}  COUNT: {}", unit.count)).unwrap_or(ptr::null_mut())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::{CStr, CString};

    #[test]
    fn a_status_name_reads_back_to_its_code_in_any_case() {
        let name = CString::new("pmix_err_not_found").unwrap();
        let nonsense = CString::new("PMIX_NOTHING").unwrap();
        // SAFETY: C strings of this test.
        let (name, nonsense) = unsafe { (Str::new(name.as_ptr()), Str::new(nonsense.as_ptr())) };
        assert_eq!(PMIx_Error_code(name), Status::ERR_NOT_FOUND.0);
        assert_eq!(PMIx_Error_code(nonsense), CStatus::MIN);
    }

    #[test]
    fn a_proc_prints_with_its_special_rank_by_name() {
        let mut p = CProc::zeroed();
        crate::boundary::write_fixed(&mut p.nspace, "job");
        p.rank = pmix::model::Rank::WILDCARD.0;
        // SAFETY: a process of this test; the text is ours to free.
        unsafe {
            let text = PMIx_Proc_string(In::new(&p));
            assert_eq!(CStr::from_ptr(text).to_str().unwrap(), "[job,WILDCARD]");
            crate::boundary::free(text);
        }
    }
}
