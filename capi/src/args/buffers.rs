//! Data buffers (`pmix_data_buffer_t`) read and written through the pointer types: their
//! bytes, loads, unloads and payload copies.

use super::*;

impl In<'_, CDataBuffer> {
    /// A copy of the bytes not yet unpacked; NULL is `PMIX_ERR_BAD_PARAM`.
    pub(crate) fn unread(self) -> Result<Vec<u8>, Status> {
        // SAFETY: a buffer of this library, or zeroed (the promise of the argument).
        Ok(unsafe { unread(self.required()?)? }.to_vec())
    }
}

impl InOut<'_, CDataBuffer> {
    /// The shared view of the buffer while `self` is borrowed.
    fn buffer(&self) -> Result<&CDataBuffer, Status> {
        // SAFETY: as `get`, for a shared borrow while `self` is borrowed.
        unsafe { self.0.as_ref() }.ok_or(Status::ERR_BAD_PARAM)
    }

    /// A copy of the bytes not yet unpacked.
    pub(crate) fn unread(&self) -> Result<Vec<u8>, Status> {
        let b = self.buffer()?;
        // SAFETY: a buffer of this library, or zeroed (the promise of the argument).
        Ok(unsafe { unread(b)? }.to_vec())
    }

    /// Append `bytes`.
    pub(crate) fn append(&mut self, bytes: &[u8]) -> Result<(), Status> {
        // SAFETY: as `get`, while `self` is borrowed mutably.
        let b = unsafe { self.0.as_mut() }.ok_or(Status::ERR_BAD_PARAM)?;
        // SAFETY: a buffer of this library, or zeroed (the promise of the argument).
        unsafe { append(b, bytes) }
    }

    /// Mark `consumed` more bytes as unpacked (at most as many as are unread).
    pub(crate) fn consume(&mut self, consumed: usize) -> Result<(), Status> {
        // SAFETY: as `get`, while `self` is borrowed mutably.
        let b = unsafe { self.0.as_mut() }.ok_or(Status::ERR_BAD_PARAM)?;
        // SAFETY: a buffer of this library (the promise of the argument); the position is
        // checked against what is unread.
        unsafe {
            if consumed > unread(b)?.len() {
                return Err(Status::ERR_BAD_PARAM);
            }
            consume(b, consumed);
        }
        Ok(())
    }

    /// Empty the buffer and release its block.
    pub(crate) fn release(&mut self) -> Result<(), Status> {
        // SAFETY: as `get`, while `self` is borrowed mutably.
        let b = unsafe { self.0.as_mut() }.ok_or(Status::ERR_BAD_PARAM)?;
        // SAFETY: a buffer of this library, or zeroed (the promise of the argument).
        unsafe { release_buffer(b) };
        Ok(())
    }

    /// Take the payload's bytes over, emptied first, to unpack from the start; the payload
    /// is left empty (`PMIx_Data_load`).
    pub(crate) fn load(self, payload: InOut<'_, CByteObject>) -> Result<(), Status> {
        let (b, p) = (self.get()?, payload.get()?);
        // SAFETY: the buffer as above; the payload's bytes are a block of libc's allocator
        // the call takes over (the promise of that argument).
        unsafe { take_payload(b, p) };
        Ok(())
    }

    /// Take `block` of `size` bytes over, as [`load`](Self::load) does a payload's.
    pub(crate) fn load_block(self, block: Block, size: usize) -> Result<(), Status> {
        let mut payload = CByteObject {
            bytes: block.0,
            size,
        };
        // SAFETY: a block of libc's allocator of `size` bytes, handed over (the promise of
        // `block`).
        let b = self.get()?;
        // SAFETY: as above.
        unsafe { take_payload(b, &mut payload) };
        Ok(())
    }
}
