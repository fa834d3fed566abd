//! Fabric registration under a real host (`pmixrun`): the default fabric is this machine's
//! interfaces, one device per entry of `/sys/class/net` but loopback; an update describes it
//! again; a fabric named otherwise is not found; a deregistered fabric cannot be deregistered
//! twice. Prints `ok <step>` or `FAIL <step>: <reason>`; exits non-zero on a failure.

use std::process::ExitCode;

use pmix::model::{Info, Status, attr};

fn main() -> ExitCode {
    let Some(client) = pmix_tests::init_client() else {
        return ExitCode::FAILURE;
    };
    let interfaces = std::fs::read_dir("/sys/class/net")
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| e.file_name() != "lo")
                .count()
        })
        .unwrap_or(0);
    let mut failed = false;
    let mut step = |what: &str, r: Result<(), String>| match r {
        Ok(()) => println!("ok {what}"),
        Err(e) => {
            println!("FAIL {what}: {e}");
            failed = true;
        }
    };
    let devices = |info: &[Info]| info.iter().find_map(|i| i.get(attr::FABRIC_NUM_DEVICES));
    match client.fabric_register(&[]) {
        Ok(mut fabric) => {
            let named = fabric.name.as_deref().is_some_and(|n| n.ends_with("-net"));
            step(
                "register",
                if named && devices(&fabric.info) == Some(interfaces) {
                    Ok(())
                } else {
                    Err(format!("{fabric:?}, wanted {interfaces} devices"))
                },
            );
            let updated = client.fabric_update(&mut fabric);
            step(
                "update",
                match updated {
                    Ok(()) if devices(&fabric.info) == Some(interfaces) => Ok(()),
                    other => Err(format!("{other:?}: {:?}", fabric.info)),
                },
            );
            let first = client.fabric_deregister(&mut fabric);
            let again = client.fabric_deregister(&mut fabric);
            step(
                "deregister",
                match (first, again.map_err(|e| e.status())) {
                    (Ok(()), Err(Status::ERR_BAD_PARAM)) => Ok(()),
                    other => Err(format!("{other:?}")),
                },
            );
        }
        Err(s) => step("register", Err(format!("{s:?}"))),
    }
    let other = [Info::new(
        attr::FABRIC_IDENTIFIER,
        "no-such-fabric".to_owned(),
    )];
    step(
        "unknown fabric",
        match client.fabric_register(&other).map_err(|e| e.status()) {
            Err(Status::ERR_NOT_FOUND) => Ok(()),
            other => Err(format!("{other:?}, wanted PMIX_ERR_NOT_FOUND")),
        },
    );
    let _ = client.finalize();
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
