#!/usr/bin/env bash
# A one-node Slurm cluster on localhost, for tests: munged, slurmctld and slurmd (Debian's munge
# and slurm-wlm) with their config, keys, sockets, state and logs all under DIR.
#   scripts/slurm/local_cluster.sh start DIR   starts the daemons, waits until the node is idle,
#                                              prints `export SLURM_CONF=DIR/slurm.conf`
#   scripts/slurm/local_cluster.sh stop DIR    stops them by the process ids start wrote
# Exit 77 from start: Slurm cannot run here (not installed, not root, or a daemon did not come up);
# the reason is on stderr, and the test that called it reports a SKIP, not a pass.
set -euo pipefail
cmd=${1:-}; dir=${2:-}
[[ -n $cmd && -n $dir ]] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }
mkdir -p "$dir"; dir=$(cd "$dir" && pwd)

stop() {
  for name in slurmd slurmctld munged; do
    if [[ -f $dir/$name.pid ]]; then
      pid=$(cat "$dir/$name.pid")
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      rm -f "$dir/$name.pid"
    fi
  done
}

cannot() { echo "local_cluster: Slurm cannot start here: $*" >&2; stop; exit 77; }

if [[ $cmd == stop ]]; then stop; exit 0; fi
[[ $cmd == start ]] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }

for tool in munged slurmctld slurmd sbatch squeue scancel sinfo; do
  command -v "$tool" >/dev/null || cannot "$tool is not installed (apt-get install slurm-wlm munge)"
done
# slurmd starts job steps as their user, which needs root; CI runs as root.
[[ $(id -u) == 0 ]] || cannot "slurmd needs root to start jobs (running as $(id -un))"

mkdir -p "$dir/state" "$dir/spool" "$dir/munge"
chmod 700 "$dir/munge"
head -c 1024 /dev/urandom > "$dir/munge/munge.key"
chmod 400 "$dir/munge/munge.key"
munged --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.sock" --pid-file="$dir/munge/munged.pid" \
  --log-file="$dir/munged.log" --seed-file="$dir/munge/munge.seed" --force 2>>"$dir/munged.log" || cannot "munged did not start (see $dir/munged.log)"
cp "$dir/munge/munged.pid" "$dir/munged.pid"

cpus=$(nproc)
# Ports away from the defaults, so a real Slurm on the machine is left alone.
port=$((17000 + RANDOM % 2000))
cat > "$dir/slurm.conf" <<CONF
ClusterName=attnlab-test
SlurmctldHost=localhost
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.sock
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
SlurmctldTimeout=30
SlurmdTimeout=30
MinJobAge=600
NodeName=localhost CPUs=$cpus State=UNKNOWN
PartitionName=test Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
export SLURM_CONF=$dir/slurm.conf
slurmctld -c -f "$SLURM_CONF" || cannot "slurmctld did not start (see $dir/slurmctld.log)"
slurmd -f "$SLURM_CONF" -N localhost || cannot "slurmd did not start (see $dir/slurmd.log)"
# Both daemonize and write their pid files; wait for the node to take jobs.
for _ in $(seq 150); do
  state=$(sinfo -h -n localhost -o %t 2>/dev/null || true)
  [[ $state == idle* || $state == mix* ]] && { echo "export SLURM_CONF=$SLURM_CONF"; exit 0; }
  sleep 0.2
done
cannot "the node did not become idle within 30 s (state '${state:-none}'; see $dir/slurmctld.log, $dir/slurmd.log)"
