//! A Slurm cluster of several nodes on this machine, for a person to try (`cargo xtask slurm`):
//! the tests' cluster (`pmix_tests::slurm`), kept up until Enter is pressed (or its input
//! ends), with a script that runs a command inside it.
//!
//! `slurm_cluster [--nodes N] [--server ours|openpmix] [DIR]`; needs root.

use std::io::BufRead;
use std::path::PathBuf;
use std::process::ExitCode;

use pmix_tests::slurm::{Cluster, Server};

fn main() -> ExitCode {
    let mut nodes = 4;
    let mut server = Server::ThisProject;
    let mut dir = PathBuf::from("/tmp/pmix-slurm-cluster");
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--nodes" => match args.next().and_then(|n| n.parse().ok()) {
                Some(n) if (1..=253).contains(&n) => nodes = n,
                _ => return usage("--nodes takes a number from 1 to 253"),
            },
            "--server" => match args.next().as_deref() {
                Some("ours") => server = Server::ThisProject,
                Some("openpmix") => server = Server::OpenPmix,
                _ => return usage("--server is `ours` or `openpmix`"),
            },
            other if !other.starts_with('-') => dir = PathBuf::from(other),
            other => return usage(&format!("unknown option {other}")),
        }
    }
    let cluster = match Cluster::start(nodes, server, &dir) {
        Ok(c) => c,
        Err(why) => {
            eprintln!("slurm_cluster: the cluster did not come up: {why}");
            return ExitCode::FAILURE;
        }
    };
    let run = dir.join("run");
    if let Err(e) = std::fs::write(&run, cluster.run_script()) {
        eprintln!("slurm_cluster: cannot write {}: {e}", run.display());
        return ExitCode::FAILURE;
    }
    let _ = std::process::Command::new("chmod")
        .arg("+x")
        .arg(&run)
        .status();
    let servers = match server {
        Server::ThisProject => "this project's libpmix.so.2",
        Server::OpenPmix => "OpenPMIx's",
    };
    println!(
        "a Slurm cluster of {nodes} nodes is up in {}; each node's PMIx server is {servers}.\n\
         Run a command in it (it runs where slurmctld runs), for example:\n  \
         {} sinfo\n  \
         {} srun --mpi=pmix -N {nodes} -n {} hostname\n\
         Press Enter to stop it.",
        dir.display(),
        run.display(),
        run.display(),
        2 * nodes
    );
    let _ = std::io::stdin().lock().lines().next();
    drop(cluster);
    println!("the cluster is stopped and its folder removed");
    ExitCode::SUCCESS
}

fn usage(why: &str) -> ExitCode {
    eprintln!(
        "slurm_cluster: {why}\nusage: slurm_cluster [--nodes N] [--server ours|openpmix] [DIR]"
    );
    ExitCode::FAILURE
}
