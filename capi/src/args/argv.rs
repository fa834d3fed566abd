//! String arrays (`char **`, NULL-terminated): read, changed in place by the argv helpers,
//! and released.

use super::*;

/// A NULL-terminated array of strings (`char **keys`, an argv): NULL or its strings.
#[repr(transparent)]
#[derive(Clone, Copy, Debug)]
pub struct Argv<'a>(*const *mut c_char, PhantomData<&'a c_char>);

impl<'a> Argv<'a> {
    /// # Safety
    /// `p` is NULL or a NULL-terminated array of NUL-terminated strings, all outliving the
    /// argument.
    pub unsafe fn new(p: *const *mut c_char) -> Self {
        Self(p, PhantomData)
    }

    /// No array.
    pub fn null() -> Self {
        Self(std::ptr::null(), PhantomData)
    }

    pub(crate) fn is_null(self) -> bool {
        self.0.is_null()
    }

    /// The strings' bytes; none for NULL.
    pub(crate) fn bytes(self) -> Vec<&'a [u8]> {
        // SAFETY: NULL or a NULL-terminated array of strings (the promise the argument
        // carries).
        unsafe { argv_bytes(self.0) }
    }

    /// The strings as text (names, keys); empty for NULL.
    pub(crate) fn texts(self) -> Vec<String> {
        // SAFETY: NULL or a NULL-terminated array of strings (the promise the argument
        // carries).
        unsafe { read_argv(self.0) }.into_iter().flatten().collect()
    }
}

/// A string array the call grows or changes in place (`char ***argv`, `char ***env`): NULL
/// or writable; `*argv` NULL, a NULL-terminated array of libc's allocator whose strings are
/// libc's too (what the argv helpers make), or the process's own `environ`, which is only
/// read here (`PMIx_Setenv` changes it through libc; growing or changing it in place is
/// refused with `PMIX_ERR_BAD_PARAM`).
#[repr(transparent)]
#[derive(Debug)]
pub struct ArgvMut<'a>(*mut *mut *mut c_char, PhantomData<&'a mut c_char>);

impl ArgvMut<'_> {
    /// # Safety
    /// `p` is NULL or writable; `*p` as the type says; both outlive the argument.
    pub unsafe fn new(p: *mut *mut *mut c_char) -> Self {
        Self(p, PhantomData)
    }

    pub(crate) fn is_null(&self) -> bool {
        self.0.is_null()
    }

    /// The array `*argv` names.
    fn array(&self) -> Result<*mut *mut c_char, Status> {
        // SAFETY: NULL or writable, so readable (the promise the argument carries).
        unsafe { self.0.as_ref() }
            .copied()
            .ok_or(Status::ERR_BAD_PARAM)
    }

    /// Copies of the entries; NULL is `PMIX_ERR_BAD_PARAM`.
    pub(crate) fn entries(&self) -> Result<Vec<Vec<u8>>, Status> {
        let array = self.array()?;
        // SAFETY: NULL or a NULL-terminated array of strings (the promise).
        Ok(unsafe { argv_bytes(array) }
            .into_iter()
            .map(<[u8]>::to_vec)
            .collect())
    }

    /// Whether the array is the process's own environment.
    pub(crate) fn is_process_env(&self) -> Result<bool, Status> {
        Ok(is_process_env(self.array()?))
    }

    /// A copy of `arg` at the front or the end, the array grown (made when NULL); the
    /// process's `environ` is refused.
    pub(crate) fn insert(&mut self, arg: &[u8], at_front: bool) -> Result<(), Status> {
        if self.is_process_env()? {
            return Err(Status::ERR_BAD_PARAM);
        }
        // SAFETY: writable (the promise the argument carries).
        let argv = unsafe { self.0.as_mut() }.ok_or(Status::ERR_BAD_PARAM)?;
        // SAFETY: NULL or an array of libc's allocator (the promise).
        unsafe { argv_insert(argv, arg, at_front) }
    }

    /// Replace entry `at` with a copy of `entry`; `PMIX_ERR_BAD_PARAM` past the entries,
    /// and for the process's `environ`.
    pub(crate) fn replace(&mut self, at: usize, entry: &[u8]) -> Result<(), Status> {
        if self.is_process_env()? || at >= self.entries()?.len() {
            return Err(Status::ERR_BAD_PARAM);
        }
        // SAFETY: an array of libc's allocator with more than `at` entries (checked).
        unsafe { argv_replace(self.array()?, at, entry) }
    }
}

/// A string array the call releases (`PMIx_Argv_free`'s `char **`): NULL or a
/// NULL-terminated array of libc's allocator whose strings are libc's too, no longer used
/// by the caller.
#[repr(transparent)]
#[derive(Debug)]
pub struct ArgvOwned(*mut *mut c_char);

impl ArgvOwned {
    /// # Safety
    /// `p` is NULL or such an array, handed over.
    pub unsafe fn new(p: *mut *mut c_char) -> Self {
        Self(p)
    }

    /// Release the strings and the array.
    pub(crate) fn free(self) {
        // SAFETY: NULL or an array of libc's, handed over (the promise).
        unsafe { free_argv(self.0) };
    }
}
