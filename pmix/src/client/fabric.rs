//! The client's fabric calls (v5.0 §15.4): register a fabric the host describes, update its
//! description, and deregister it. The host answers (through the server's `fabric` upcall);
//! the client keeps which fabrics it registered, so a fabric deregistered (or never
//! registered) is refused with `PMIX_ERR_BAD_PARAM`.

use crate::Error;
use crate::model::{Fabric, Info, Status, attr};
use crate::wire::Request;
use crate::wire::ops::Op;

use super::core::replies;
use super::{Client, Pending};

impl Client {
    /// `PMIx_Fabric_register`: ask the host for a fabric, chosen by `directives`
    /// (`PMIX_FABRIC_IDENTIFIER`, `PMIX_FABRIC_VENDOR`, `PMIX_FABRIC_PLANE`; none: the host's
    /// default). The fabric's name is its `PMIX_FABRIC_IDENTIFIER` and its index the host's
    /// `PMIX_FABRIC_INDEX` (or one of this client's when the server names none); its
    /// information is all the host said of it.
    pub async fn fabric_register(&self, directives: &[Info]) -> Result<Fabric, Error> {
        let req = Request::Op(Op::FabricRegister {
            directives: directives.to_vec(),
        });
        let info = self.fabric_request(&req).await?;
        let name = info.iter().find_map(|i| i.get(attr::FABRIC_IDENTIFIER));
        let given = info
            .iter()
            .find_map(|i| i.get(attr::FABRIC_INDEX))
            .and_then(|i| u64::try_from(i).ok());
        let mut state = self.state();
        // A server that names no index (OpenPMIx 4.2's, measured) still registered the
        // fabric: number it here, after every index in use.
        let index = given.unwrap_or_else(|| state.fabrics.last().map_or(0, |i| i + 1));
        state.fabrics.insert(index);
        Ok(Fabric { name, index, info })
    }

    /// `PMIx_Fabric_update`: the host's description of `fabric` now.
    pub async fn fabric_update(&self, fabric: &mut Fabric) -> Result<(), Error> {
        if !self.state().fabrics.contains(&fabric.index) {
            return Err(Status::ERR_BAD_PARAM.into());
        }
        let req = Request::Op(Op::FabricUpdate {
            index: fabric.index,
        });
        fabric.info = self.fabric_request(&req).await?;
        Ok(())
    }

    /// `PMIx_Fabric_deregister`: forget `fabric` (nothing to tell the server: it keeps no
    /// registration).
    pub async fn fabric_deregister(&self, fabric: &mut Fabric) -> Result<(), Error> {
        if !self.state().fabrics.remove(&fabric.index) {
            return Err(Status::ERR_BAD_PARAM.into());
        }
        fabric.info.clear();
        Ok(())
    }

    /// `PMIx_Fabric_register_nb` (see [`Client::fabric_register`]).
    pub fn fabric_register_nb(&self, directives: &[Info]) -> Pending<Fabric> {
        let (c, d) = (self.clone(), directives.to_vec());
        Pending(self.run_nb(async move { c.fabric_register(&d).await }))
    }

    /// `PMIx_Fabric_update_nb`: the updated fabric comes back with the result.
    pub fn fabric_update_nb(&self, mut fabric: Fabric) -> Pending<Fabric> {
        let c = self.clone();
        Pending(self.run_nb(async move { c.fabric_update(&mut fabric).await.map(|()| fabric) }))
    }

    /// `PMIx_Fabric_deregister_nb` (see [`Client::fabric_deregister`]).
    pub fn fabric_deregister_nb(&self, mut fabric: Fabric) -> Pending<()> {
        let c = self.clone();
        Pending(self.run_nb(async move { c.fabric_deregister(&mut fabric).await }))
    }

    async fn fabric_request(&self, req: &Request) -> Result<Vec<Info>, Error> {
        replies::fabric(self.inner.conn.request(req).await?)
    }
}
