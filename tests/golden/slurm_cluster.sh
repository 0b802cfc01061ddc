#!/usr/bin/env bash
# Starts a throw-away single-node Slurm cluster (munge, slurmctld, slurmd from Debian) on loopback in a
# temporary folder, as root. Source it: it sets SLURM_CONF and defines stop_slurm_cluster.
# Needs: root, munged, slurmctld, slurmd, sbatch. Exits 77 (skip) with a reason otherwise.
slurm_skip() { echo "SKIP: $1"; exit 77; }
[ "$(id -u)" -eq 0 ] || slurm_skip "not root: a Slurm cluster cannot be started"
for p in munged slurmctld slurmd sbatch squeue; do command -v $p >/dev/null || slurm_skip "$p not installed (scripts/setup.sh installs slurm-wlm and munge)"; done
SLURM_DIR=$(mktemp -d /tmp/coinfer-slurm-XXXXXX)
chmod 755 "$SLURM_DIR"
mkdir -p "$SLURM_DIR/state" "$SLURM_DIR/spool" "$SLURM_DIR/munge"
chmod 700 "$SLURM_DIR/munge"
dd if=/dev/urandom of="$SLURM_DIR/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$SLURM_DIR/munge/munge.key"
munged --force --key-file="$SLURM_DIR/munge/munge.key" --socket="$SLURM_DIR/munge/munge.sock" \
  --pid-file="$SLURM_DIR/munge/munged.pid" --log-file="$SLURM_DIR/munge/munged.log" --seed-file="$SLURM_DIR/munge/seed" \
  || slurm_skip "munged did not start: $(tail -2 "$SLURM_DIR/munge/munged.log" 2>/dev/null)"
free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
host=$(hostname -s)
cat > "$SLURM_DIR/slurm.conf" <<CONF
ClusterName=coinfertest
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
AuthType=auth/munge
AuthInfo=socket=$SLURM_DIR/munge/munge.sock
StateSaveLocation=$SLURM_DIR/state
SlurmdSpoolDir=$SLURM_DIR/spool
SlurmctldPidFile=$SLURM_DIR/slurmctld.pid
SlurmdPidFile=$SLURM_DIR/slurmd.pid
SlurmctldLogFile=$SLURM_DIR/slurmctld.log
SlurmdLogFile=$SLURM_DIR/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$SLURM_DIR/slurm.conf"
stop_slurm_cluster() {
  for f in slurmd.pid slurmctld.pid munge/munged.pid; do
    [ -f "$SLURM_DIR/$f" ] && kill "$(cat "$SLURM_DIR/$f")" 2>/dev/null
  done
  sleep 1
  rm -rf "$SLURM_DIR"
}
slurmctld -f "$SLURM_CONF" -i || { cat "$SLURM_DIR/slurmctld.log"; stop_slurm_cluster; slurm_skip "slurmctld did not start"; }
slurmd -f "$SLURM_CONF" || { cat "$SLURM_DIR/slurmd.log"; stop_slurm_cluster; slurm_skip "slurmd did not start"; }
for i in $(seq 1 30); do
  sinfo -h -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)' && break
  sleep 1
done
sinfo -h -o %t | grep -qE '^(idle|mix|alloc)' || { echo "node state: $(sinfo -h -o %t)"; tail -5 "$SLURM_DIR/slurmctld.log" "$SLURM_DIR/slurmd.log"; stop_slurm_cluster; echo "FAIL: Slurm node did not become idle"; exit 1; }
