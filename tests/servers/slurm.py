"""A real one-node Slurm (Debian's slurm-wlm 22.05) for tests, started and stopped by the test (#49).

Its own munged (private socket and key), slurmctld and slurmd, with a generated slurm.conf: ports
asked of the kernel, state, spool, logs and pid files in the test's directory, the node declared
with as many CPUs as the test's tasks (config_overrides), so `srun -n 4` starts four tasks with
SLURM_PROCID 0..3 on a two-core machine.  Needs root (`make deps-test` installs the packages).
"""
import os
import shutil
import subprocess
import time

from servers.loopback import free_port

CONF = """ClusterName=gvtest
SlurmctldHost={host}(127.0.0.1)
MailProg=/bin/true
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={dir}/munge.sock
StateSaveLocation={dir}/state
SlurmdSpoolDir={dir}/spool
SlurmctldPidFile={dir}/slurmctld.pid
SlurmdPidFile={dir}/slurmd.pid
SlurmctldLogFile={dir}/slurmctld.log
SlurmdLogFile={dir}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/linear
ReturnToService=2
SlurmdParameters=config_overrides
NodeName=gvnode NodeHostname={host} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN
PartitionName=gv Nodes=gvnode Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
"""


def available():
    if os.geteuid() != 0:
        return "the test's Slurm daemons run as root"
    for tool in ("munged", "slurmctld", "slurmd", "srun"):
        if not shutil.which(tool):
            return f"{tool} is not installed (slurm-wlm, munge: make deps-test)"
    return None


class Slurm:
    def __init__(self, workdir, cpus=4):
        self.dir = workdir
        self.cpus = cpus
        self.procs = []
        self.conf = os.path.join(workdir, "slurm.conf")
        self.env = dict(os.environ, SLURM_CONF=self.conf)

    def _start(self, argv):
        self.procs.append(subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                           env=self.env, start_new_session=True))

    def __enter__(self):
        d = self.dir
        for sub in ("state", "spool"):
            os.makedirs(os.path.join(d, sub), exist_ok=True)
        key = os.path.join(d, "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o400)
        with open(self.conf, "w") as f:
            f.write(CONF.format(ctld_port=free_port(), d_port=free_port(), dir=d, host=os.uname().nodename,
                                cpus=self.cpus))
        try:
            self._start(["munged", "--foreground", "--force", f"--socket={d}/munge.sock", f"--key-file={key}",
                         f"--pid-file={d}/munged.pid", f"--log-file={d}/munged.log", f"--seed-file={d}/munge.seed"])
            self._wait(lambda: os.path.exists(f"{d}/munge.sock"), "munged")
            self._start(["slurmctld", "-D", "-f", self.conf])
            self._start(["slurmd", "-D", "-f", self.conf, "-N", "gvnode"])
            self._wait(self._idle, "slurmd to register")
        except Exception:
            self.__exit__(None, None, None)
            raise
        return self

    def _idle(self):
        p = subprocess.run(["sinfo", "-h", "-N", "-o", "%T"], capture_output=True, text=True, env=self.env)
        return p.returncode == 0 and p.stdout.strip().startswith("idle")

    def _wait(self, cond, what, seconds=60):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if cond():
                return
            for p in self.procs:
                if p.poll() is not None:
                    raise RuntimeError(f"{what}: a daemon exited with {p.returncode}: {self.logs()}")
            time.sleep(0.2)
        raise RuntimeError(f"{what}: not ready after {seconds} s: {self.logs()}")

    def logs(self):
        out = []
        for name in ("munged.log", "slurmctld.log", "slurmd.log"):
            path = os.path.join(self.dir, name)
            if os.path.exists(path):
                out.append(f"--- {name}\n" + open(path, errors="replace").read()[-1500:])
        return "\n".join(out)

    def srun(self, args, timeout=300, env=None):
        e = dict(self.env, **(env or {}))
        return subprocess.run(["srun", *args], capture_output=True, text=True, timeout=timeout, env=e)

    def srun_start(self, args, env=None):
        """srun started and left running (the test acts while its tasks run): the Popen, output piped."""
        return subprocess.Popen(["srun", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=dict(self.env, **(env or {})))

    def __exit__(self, *exc):
        for p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
        for p in reversed(self.procs):
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
