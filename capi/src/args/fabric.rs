//! Fabrics (`pmix_fabric_t`) read and written through the pointer types: what a
//! registration wrote, updates and deregistrations.

use super::*;

impl InOut<'_, CFabric> {
    /// The fabric the struct describes.
    pub(crate) fn fabric(&self) -> Result<Fabric, Status> {
        // SAFETY: as `get`, for a shared borrow while `self` is borrowed.
        let f = unsafe { self.0.as_ref() }.ok_or(Status::ERR_BAD_PARAM)?;
        // SAFETY: its pointers are NULL or this library's (the promise of the argument).
        unsafe { read_fabric(f) }
    }

    /// Describe `fabric` in the struct, releasing what this library filled it with before.
    pub(crate) fn update_fabric(self, fabric: &Fabric) -> Result<(), Status> {
        // SAFETY: its pointers are NULL or this library's (the promise of the argument).
        unsafe { write_fabric(fabric, self.get()?, true) }
    }

    /// Release what this library filled the struct with, and clear it.
    pub(crate) fn clear_fabric(self) -> Result<(), Status> {
        // SAFETY: its pointers are NULL or this library's (the promise of the argument).
        unsafe { clear_fabric(self.get()?) };
        Ok(())
    }
}

/// `fabric` as a `pmix_fabric_t` whose name and information are blocks of libc's allocator
/// this library releases later (an update, a deregistration).
fn c_fabric(fabric: &Fabric) -> Result<CFabric, Status> {
    let mut written = empty_fabric();
    // SAFETY: a fresh struct: nothing it held is read or released.
    unsafe { write_fabric(fabric, &mut written, false)? };
    Ok(written)
}

impl Out<'_, CFabric> {
    /// Describe `fabric` there, overwriting whatever it held (a registration: the caller's
    /// struct may not be constructed); NULL is `PMIX_ERR_BAD_PARAM`.
    pub(crate) fn set_fabric(self, fabric: &Fabric) -> Result<(), Status> {
        if self.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        self.set(c_fabric(fabric)?);
        Ok(())
    }
}
