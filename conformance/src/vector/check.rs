//! Loading's last stage: [`Vector::check`] verifies everything a runner relies on (callers,
//! handles, saved values, names of attributes, statuses and types, registrations), so a bad
//! file is an error naming its field, never a runner that trips mid-vector.

use super::*;

impl Vector {
    /// The checks a runner relies on, as a message naming the field.
    pub(super) fn check(&self) -> Result<(), String> {
        if self.summary.trim().is_empty() {
            return Err("field `summary` is empty".into());
        }
        for v in &self.versions {
            if v != "v5.0" && v != "draft" {
                return Err(format!("field `versions`: unknown version \"{v}\""));
            }
        }
        Nspace::new(&self.setup.nspace).map_err(|e| format!("field `setup.nspace`: {e}"))?;
        let ranks = self.ranks();
        if ranks.is_empty() {
            return Err("field `setup.node`: the job has no ranks".into());
        }
        let mut dedup = ranks.clone();
        dedup.dedup();
        if dedup.len() != ranks.len() {
            return Err("field `setup.node`: a rank is on two nodes".into());
        }
        for r in &self.setup.not_started {
            if !ranks.contains(r) {
                return Err(format!(
                    "field `setup.not_started`: rank {r} is not in the job"
                ));
            }
        }
        for r in &self.setup.started_by_step {
            if !ranks.contains(r) || self.setup.not_started.contains(r) {
                return Err(format!(
                    "field `setup.started_by_step`: rank {r} is not in the job, or never starts"
                ));
            }
        }
        if let Some(r) = self.setup.other_user.iter().find(|r| !ranks.contains(r)) {
            return Err(format!(
                "field `setup.other_user`: rank {r} is not in the job"
            ));
        }
        for i in &self.setup.info {
            i.to_info(&self.setup.nspace)
                .map_err(|e| format!("field `setup.info`: {e}"))?;
        }
        for code in &self.setup.host.unrelayed {
            status_named(code).map_err(|e| format!("field `setup.host.unrelayed`: {e}"))?;
        }
        for (upcall, status) in &self.setup.host.refuse {
            if !REFUSABLE.contains(&upcall.as_str()) {
                return Err(format!(
                    "field `setup.host.refuse`: the host cannot refuse {upcall} (only {REFUSABLE:?})"
                ));
            }
            status_named(status).map_err(|e| format!("field `setup.host.refuse`: {e}"))?;
        }
        for i in &self.setup.server_info {
            i.to_info(&self.setup.nspace)
                .map_err(|e| format!("field `setup.server_info`: {e}"))?;
        }
        for j in &self.setup.jobs {
            let at = |e: String| format!("field `setup.job` \"{}\": {e}", j.nspace);
            Nspace::new(&j.nspace).map_err(|e| at(e.to_string()))?;
            if j.nspace == self.setup.nspace
                || self
                    .setup
                    .jobs
                    .iter()
                    .filter(|o| o.nspace == j.nspace)
                    .count()
                    > 1
            {
                return Err(at("the namespace is registered twice".into()));
            }
            for i in &j.info {
                i.to_info(&j.nspace).map_err(&at)?;
            }
            for n in j.nodes.iter().flatten() {
                if !self.setup.nodes.iter().any(|x| &x.name == n) {
                    return Err(at(format!("no node is named {n}")));
                }
            }
        }
        for (target, e) in &self.expected_failure {
            let at = |what: String| format!("field `expected_failure.{target}`: {what}");
            if e.step > self.steps.len() {
                return Err(at(format!(
                    "step {} is beyond the vector's {} steps",
                    e.step,
                    self.steps.len()
                )));
            }
            use crate::outcome::Seen;
            let a_status = status_named(&e.seen).is_ok() || e.seen.parse::<i32>().is_ok();
            // Every word but `no such call` names what was seen: `value: ...`, `upcalls: ...`.
            let detailed = Seen::DETAILED.iter().any(|w| {
                e.seen
                    .strip_prefix(w)
                    .and_then(|rest| rest.strip_prefix(": "))
                    .is_some_and(|rest| !rest.trim().is_empty())
            });
            if !a_status && !detailed && e.seen != Seen::NO_SUCH_CALL {
                return Err(at(format!(
                    "`seen` \"{}\" is neither a status, nor `{}`, nor one of `{}: ` with what \
                     was seen",
                    e.seen,
                    Seen::NO_SUCH_CALL,
                    Seen::DETAILED.join(": `, `")
                )));
            }
            if e.reason.trim().is_empty() {
                return Err(at("the reason is empty".into()));
            }
        }
        let mut handles: Vec<&str> = Vec::new();
        let mut handlers: Vec<&str> = Vec::new();
        // The ranks of `setup.started_by_step` started by an earlier step.
        let mut late: Vec<u32> = Vec::new();
        let mut saves = Saved::new();
        for n in &self.setup.nodes {
            saves.extend(node_presets(&n.name, "", "/", 1));
        }
        saves.extend(run_presets());
        for (n, s) in self.steps.iter().enumerate() {
            let at = |what: String| format!("step {} (`{}`): {what}", n + 1, s.call.name());
            if let Callers::All(a) = &s.by
                && a != "all"
                && self.server_of(s).is_none()
                && !self.by_tool(s)
            {
                return Err(at(format!(
                    "field `proc`: \"{a}\" is neither a rank, \"all\", \"tool\" nor \"server:NODE\" of a node"
                )));
            }
            let misplaced = if self.by_tool(s) {
                !s.call.tool_may_make()
            } else {
                s.call.by_tool()
            };
            if misplaced {
                return Err(at(if s.call.by_tool() {
                    "field `proc`: a tool's call is made by \"tool\"".into()
                } else {
                    "field `proc`: the tool makes only the calls of a tool, of I/O forwarding, of \
                     event handlers and the non-blocking publish, lookup and unpublish"
                        .into()
                }));
            }
            if self.server_of(s).is_some() != s.call.by_server() {
                return Err(at(if s.call.by_server() {
                    "field `proc`: a server's call is made by \"server:NODE\"".into()
                } else {
                    "field `proc`: a server makes only the calls of a server".into()
                }));
            }
            if self.server_of(s).is_none() && !self.by_tool(s) {
                let callers = self.callers(s);
                if matches!(s.call, Call::Init) {
                    // An `init` starts one rank of `setup.started_by_step`, once.
                    let [r] = callers[..] else {
                        return Err(at("field `proc`: an init starts one rank".into()));
                    };
                    if !self.setup.started_by_step.contains(&r) || late.contains(&r) {
                        return Err(at(format!(
                            "field `proc`: rank {r} is not in `setup.started_by_step`, or is started already"
                        )));
                    }
                    if s.start.is_some() {
                        return Err(at("field `start`: an init is not started".into()));
                    }
                    late.push(r);
                } else {
                    for r in callers {
                        if !self.started().contains(&r) && !late.contains(&r) {
                            return Err(at(format!(
                                "field `proc`: rank {r} does not run a client (yet)"
                            )));
                        }
                    }
                }
            }
            for name in step_refs(s) {
                if !saves.contains_key(&name) {
                    return Err(at(format!("\"${name}\": no earlier step saves {name}")));
                }
            }
            // The call as it will run, with values of the types the runner saves.
            let call = s.with_saved(&saves).map_err(&at)?.call;
            if let Some(name) = &s.save {
                if self.callers(s).len() != 1 || s.start.is_some() {
                    return Err(at(
                        "field `save`: a saved value belongs to one caller".into()
                    ));
                }
                saves.insert(name.clone(), String::new().into());
            }
            call.check(&self.setup.nspace).map_err(&at)?;
            for api in call.more_apis() {
                if !self.apis.iter().any(|a| a == api) {
                    return Err(at(format!(
                        "the call makes {api} too: name it in field `apis`"
                    )));
                }
            }
            if let Some(st) = &s.expect.status {
                for name in st.to_vec() {
                    status_named(&name).map_err(|e| at(format!("field `expect.status`: {e}")))?;
                }
            }
            for v in s.expect.value.iter().chain(&s.expect.value_any) {
                v.to_value(&self.setup.nspace)
                    .map_err(|e| at(format!("field `expect.value`: {e}")))?;
            }
            if let Some(t) = &s.expect.value_type
                && pmix::model::DataType::from_name(t).is_none()
            {
                return Err(at(format!(
                    "field `expect.value_type`: no type is named {t}"
                )));
            }
            for b in &s.expect.bits_set {
                if pmix::model::Locality::from_name(b).is_none_or(|l| l.0 == 0) {
                    return Err(at(format!(
                        "field `expect.bits_set`: no locality bit is named {b}"
                    )));
                }
            }
            for r in &s.expect.results {
                r.to_info(&self.setup.nspace)
                    .map_err(|e| at(format!("field `expect.results`: {e}")))?;
            }
            for k in &s.expect.result_keys {
                key_string(k).map_err(|e| at(format!("field `expect.result_keys`: {e}")))?;
            }
            if !s.expect.supports.is_empty() && !matches!(s.call, Call::Query { .. }) {
                return Err(at("field `expect.supports`: only a query answers it".into()));
            }
            for sp in &s.expect.supports {
                if !SUPPORT_LEVELS.contains(&sp.level.as_str()) {
                    return Err(at(format!(
                        "field `expect.supports`: {} is not one of {}",
                        sp.level,
                        SUPPORT_LEVELS.join(", ")
                    )));
                }
                if let Some(a) = (sp.attributes.iter()).find(|a| attr::by_name(a).is_none()) {
                    return Err(at(format!(
                        "field `expect.supports`: no attribute is named {a}"
                    )));
                }
            }
            for ev in s.expect.events.iter().flatten() {
                status_named(&ev.status).map_err(|e| at(format!("field `expect.events`: {e}")))?;
                for i in ev.info.iter().chain(&ev.results) {
                    i.to_info(&self.setup.nspace)
                        .map_err(|e| at(format!("field `expect.events`: {e}")))?;
                }
            }
            for u in &s.expect.upcalls {
                let field = |e: String| at(format!("field `expect.upcalls` ({}): {e}", u.upcall));
                let me = Rank(self.callers(s).first().copied().unwrap_or(0));
                for p in u.proc.iter().chain(&u.procs) {
                    p.to_proc(&self.setup.nspace, me).map_err(field)?;
                }
                for i in &u.info {
                    i.to_info(&self.setup.nspace).map_err(field)?;
                }
                for k in u.keys.iter().chain(&u.asked) {
                    key_string(k).map_err(field)?;
                }
                for c in &u.codes {
                    status_named(c).map_err(field)?;
                }
            }
            if !s.expect.upcalls.is_empty() && s.start.is_some() {
                return Err(at(
                    "field `expect.upcalls`: a started call's upcalls are expected at its `await`"
                        .into(),
                ));
            }
            if let Some(h) = &s.start {
                if self.callers(s).len() != 1 || self.server_of(s).is_some() || self.by_tool(s) {
                    return Err(at(
                        "field `start`: a started call belongs to one caller".into()
                    ));
                }
                if s.call.api().is_none()
                    || matches!(
                        s.call,
                        Call::Get {
                            handle: Some(_),
                            ..
                        }
                    )
                {
                    return Err(at(
                        "field `start`: only an API call without a handle can be started".into(),
                    ));
                }
                if s.expect.status.is_some() || s.expect.value.is_some() {
                    return Err(at(
                        "field `expect`: a started call's outcome is expected at its `await`"
                            .into(),
                    ));
                }
                handles.push(h);
            }
            match &s.call {
                Call::Get {
                    handle: Some(h), ..
                } => {
                    if self.callers(s).len() != 1 {
                        return Err(at("a handle belongs to one caller".into()));
                    }
                    handles.push(h);
                }
                Call::Await { handle } if !handles.contains(&handle.as_str()) => {
                    return Err(at(format!(
                        "field `handle`: \"{handle}\" was never started"
                    )));
                }
                Call::RegisterEventHandler { handler, .. } | Call::IofPull { handler, .. } => {
                    handlers.push(handler);
                }
                Call::DeregisterEventHandler { handler }
                | Call::Events { handler, .. }
                | Call::IofDeregister { handler }
                | Call::IofOutput { handler, .. }
                    if !handlers.contains(&handler.as_str()) =>
                {
                    return Err(at(format!(
                        "field `handler`: \"{handler}\" was never registered"
                    )));
                }
                _ => {}
            }
        }
        Ok(())
    }
}
