"""Heard first: from a command (or a request) to the cue's first frame on the sink, per sound server.

Every contender plays the same cue (sounds/pico.mp3; a WAV of it for pw-play and pactl) into one sink
whose monitor is recorded by `cued-pwprobe record`, which also writes each graph cycle's
CLOCK_MONOTONIC start. A frame's time on the monitor is therefore known, and the onset is that time
minus the moment the command started (python's time.monotonic_ns() is the same clock). The floor is a
long-lived native pw_stream that plays on an in-process trigger (`cued-pwprobe --quantum 240`), timed
the same way. The device is open for everyone (a running graph, cued's device already open), as it is
while someone pages.

Cases (bench/run.py --only heard, heard-load, heard-idle):
  heard       onsets on PipeWire: floor, cued play on an open connection (native and through the
              pipewire ALSA plugin), cuectl play, pw-play, pactl play-sample through pipewire-pulse
  heard-load  the same with stress-ng --cpu 2 running while a client pages 10 times a second:
              underruns or xruns, cues that did not finish, onset p99 against the unloaded run
  heard-idle  CPU once idle (0 ticks) and open and silent (cued plus the server, % of a core)
"""
import array, bisect, json, os, shutil, signal, socket, statistics, subprocess, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "scripts", "pipewire-env.sh")
PLUGIN = os.path.join(ROOT, ".build", "pipewire-alsa", "libasound_module_pcm_pipewire.so")
RATE = 48000
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


class PipeWire:
    """The headless PipeWire of scripts/pipewire-env.sh in a directory of its own."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="cued-bench-pw-")
        out = subprocess.run([SCRIPT, "start", self.dir + "/pw"], capture_output=True, text=True, check=True).stdout
        self.env = {}
        for line in out.splitlines():
            if line.startswith("export "):
                key, value = line[len("export "):].split("=", 1)
                self.env[key] = value.strip("'")
        self.pulse = None

    def environ(self, **extra):
        return {**os.environ, "XDG_CONFIG_HOME": "/nonexistent", **self.env, **extra}

    def pid(self, name):
        return int(open(os.path.join(self.dir, "pw", name + ".pid")).read())

    def start_pulse(self):
        """pipewire-pulse: a PipeWire client that serves the PulseAudio protocol (module-protocol-pulse),
        as a desktop runs it; our own config, since Debian ships pipewire-pulse.conf in a package that
        would take over the machine's audio."""
        conf = os.path.join(self.dir, "pipewire-pulse.conf")
        address = os.path.join(self.dir, "pulse-native")
        open(conf, "w").write(f"""
context.properties = {{ log.level = 1 }}
context.spa-libs = {{ audio.convert.* = audioconvert/libspa-audioconvert
                     support.* = support/libspa-support }}
context.modules = [
  {{ name = libpipewire-module-rt flags = [ ifexists nofail ] }}
  {{ name = libpipewire-module-protocol-native }}
  {{ name = libpipewire-module-client-node }}
  {{ name = libpipewire-module-adapter }}
  {{ name = libpipewire-module-metadata }}
  {{ name = libpipewire-module-protocol-pulse args = {{ server.address = [ "unix:{address}" ] }} }}
]
""")
        self.pulse = subprocess.Popen(["pipewire", "-c", conf], env=self.environ(), stdout=subprocess.DEVNULL,
                                      stderr=open(os.path.join(self.dir, "pipewire-pulse.log"), "w"))
        self.pulse_env = {"PULSE_SERVER": "unix:" + address}
        for _ in range(200):
            if subprocess.run(["pactl", "info"], env=self.environ(**self.pulse_env), capture_output=True).returncode == 0:
                return True
            time.sleep(0.05)
        return False

    def stop(self):
        if self.pulse:
            self.pulse.terminate()
            self.pulse.wait()
        subprocess.run([SCRIPT, "stop", self.dir + "/pw"], capture_output=True)
        shutil.rmtree(self.dir, ignore_errors=True)


class Monitor:
    """`cued-pwprobe record`: the sink's monitor, and when each of its frames was on the sink."""

    def __init__(self, bin_dir, pw, seconds):
        self.samples_path = os.path.join(pw.dir, "monitor.f32")
        self.cycles_path = os.path.join(pw.dir, "cycles.txt")
        self.process = subprocess.Popen(
            [os.path.join(bin_dir, "cued-pwprobe"), "record", "--out", self.samples_path, "--cycles", self.cycles_path,
             "--seconds", str(seconds)], env=pw.environ(), stdout=subprocess.PIPE, text=True)
        assert self.process.stdout.readline().strip() == "ready", "cued-pwprobe record did not start"

    def finish(self):
        """Stops recording; returns the onsets finder."""
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=10)
        samples = array.array("f")
        with open(self.samples_path, "rb") as f:
            data = f.read()
        samples.frombytes(data[: len(data) // 8 * 8])
        cycles = [tuple(int(x) for x in line.split()) for line in open(self.cycles_path)]
        return Capture(samples, cycles)


class Capture:
    def __init__(self, samples, cycles):
        self.samples = samples
        self.frames = len(samples) // 2
        self.cycle_times = [c[0] for c in cycles]
        self.cycle_firsts = [c[1] for c in cycles]
        # The frames each cycle carried: the graph's quantum then (older recordings have no third column).
        self.cycle_frames = [c[2] if len(c) > 2 else None for c in cycles]

    def time_of(self, frame):
        """CLOCK_MONOTONIC ns when `frame` was on the sink."""
        i = bisect.bisect_right(self.cycle_firsts, frame) - 1
        return self.cycle_times[i] + (frame - self.cycle_firsts[i]) * 1_000_000_000 // RATE

    def sounding(self, frame, threshold):
        return abs(self.samples[2 * frame]) > threshold or abs(self.samples[2 * frame + 1]) > threshold

    def first_sounding(self, start, window_ns, threshold):
        """The first frame sounding within `window_ns` after `start` (monotonic ns), or None."""
        # The first cycle that began after the start, minus one cycle (a frame of it may follow the start).
        i = max(0, bisect.bisect_left(self.cycle_times, start) - 1)
        frame = self.cycle_firsts[i] if i < len(self.cycle_firsts) else self.frames
        while frame < self.frames:
            t = self.time_of(frame)
            if t > start + window_ns:
                return None
            if t >= start and self.sounding(frame, threshold):
                return frame
            frame += 1
        return None

    def onsets(self, starts, window_ns=300_000_000, threshold=1e-4):
        """For each start (monotonic ns), ms to the first sounding frame within `window_ns` after it."""
        frames = [self.first_sounding(start, window_ns, threshold) for start in starts]
        return [None if f is None else (self.time_of(f) - start) / 1e6 for f, start in zip(frames, starts)]

    def heard(self, starts, extent=None, window_ns=600_000_000, threshold=1e-4):
        """For each start: the onset (ms), the quantum of the cycle that carried the first sounding frame,
        and whether the recording lost the cue's head: with `extent` (the frames the cue sounds for),
        a cue that sounds from the very first frame of the first cycle recorded after a gap (the
        passive recorder starts with the graph, and may start a cycle or two after it) and sounds
        shorter than the cue began before the recording did. Its onset is then moved back by what is
        missing, and `cut` says so."""
        result = []
        for start in starts:
            frame = self.first_sounding(start, window_ns, threshold)
            if frame is None:
                result.append(dict(onset=None, quantum=None, cut=False))
                continue
            cycle = bisect.bisect_right(self.cycle_firsts, frame) - 1
            onset = (self.time_of(frame) - start) / 1e6
            cut = False
            if extent is not None and frame == self.cycle_firsts[cycle]:
                previous = self.cycle_frames[cycle - 1] if cycle > 0 else None
                gap = cycle == 0 or previous is None or \
                    self.cycle_times[cycle] - self.cycle_times[cycle - 1] > 1.5 * previous * 1_000_000_000 / RATE
                last = frame
                for f in range(frame, min(self.frames, frame + 2 * extent)):
                    if self.sounding(f, threshold):
                        last = f
                missing = extent - (last - frame + 1)
                if gap and missing > 0:
                    cut = True
                    onset -= missing * 1000 / RATE
            result.append(dict(onset=onset, quantum=self.cycle_frames[cycle], cut=cut))
        return result


class Client:
    """A JSON-lines connection to cued."""

    def __init__(self, path):
        self.connection = socket.socket(socket.AF_UNIX)
        self.connection.connect(path)
        self.file = self.connection.makefile("rwb")
        self.next_id = 1
        self.events = []

    def send(self, op, **fields):
        """Writes a request; returns its id (the reply is read by `reply`)."""
        message = dict(id=self.next_id, op=op, **fields)
        self.next_id += 1
        self.file.write((json.dumps(message) + "\n").encode())
        self.file.flush()
        return message["id"]

    def reply(self, request_id):
        """The reply to `request_id`; events read on the way are kept in `events`."""
        while True:
            line = json.loads(self.file.readline())
            if line.get("id") == request_id:
                return line
            if "event" in line:
                self.events.append(line)

    def request(self, op, **fields):
        return self.reply(self.send(op, **fields))


class Cued:
    def __init__(self, bin_dir, pw, device, sounds, extra=(), env=None):
        self.dir = tempfile.mkdtemp(prefix="cued-bench-heard-")
        self.socket = os.path.join(self.dir, "cued.sock")
        self.bin_dir = bin_dir
        self.process = subprocess.Popen(
            [os.path.join(bin_dir, "cued"), "--socket", self.socket, "--sounds", sounds, "--device", device, *extra],
            env=pw.environ(**(env or {})), stdout=subprocess.DEVNULL, stderr=open(os.path.join(self.dir, "cued.log"), "w"))
        for _ in range(2000):
            try:
                self.client = Client(self.socket)
                break
            except OSError:
                time.sleep(0.005)

    def cpu_ticks(self):
        stat = open(f"/proc/{self.process.pid}/stat").read().rsplit(")", 1)[1].split()
        return int(stat[11]) + int(stat[12])

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=10)
        shutil.rmtree(self.dir, ignore_errors=True)


def process_ticks(pid):
    stat = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(stat[11]) + int(stat[12])


def gap(rounds_done):
    """A pause of 150 to 350 ms that walks across the graph cycle, so onsets sample every phase."""
    return 0.15 + (rounds_done * 0.0371) % 0.2


def measure_cued(bin_dir, pw, device, rounds, env=None, label="", paused=False):
    """`play` on an open connection, then `cuectl play`, against one cued; onsets and counters.

    With `paused`, every play comes 1.7 to 1.9 s after the last one ended, so the stream has paused
    (`pipewire-pause-after`, 1.5 s) and the play resumes it."""
    cued = Cued(bin_dir, pw, device, os.path.join(ROOT, "sounds"), extra=["--idle-timeout", "60"], env=env)
    try:
        cued.client.request("play", cue="pico", volume=0)  # open the device, as while someone pages
        time.sleep(0.3)
        monitor = Monitor(bin_dir, pw, seconds=60)
        time.sleep(0.2)
        starts = {"open": [], "cuectl": []}
        for i in range(rounds):
            start = time.monotonic_ns()
            request = cued.client.send("play", cue="pico")
            starts["open"].append(start)
            cued.client.reply(request)
            time.sleep(gap(2 * i) + (1.65 if paused else 0))
            start = time.monotonic_ns()
            subprocess.run([os.path.join(bin_dir, "cuectl"), "play", "pico", "--socket", cued.socket],
                           stdout=subprocess.DEVNULL, check=True)
            starts["cuectl"].append(start)
            time.sleep(gap(2 * i + 1) + (1.65 if paused else 0))
        time.sleep(0.3)
        status = cued.client.request("status")
        capture = monitor.finish()
        return {kind: capture.onsets(values) for kind, values in starts.items()}, status
    finally:
        cued.stop()


def summary(onsets):
    heard = [o for o in onsets if o is not None]
    if not heard:
        return dict(heard=0, of=len(onsets))
    return dict(median_ms=round(statistics.median(heard), 2), p99_ms=round(percentile(heard, 99), 2),
                min_ms=round(min(heard), 2), max_ms=round(max(heard), 2), heard=len(heard), of=len(onsets))


def heard(record, bin_dir, quick):
    rounds = 6 if quick else 24
    pw = PipeWire()
    work = tempfile.mkdtemp(prefix="cued-bench-heard-work-")
    try:
        wav = os.path.join(work, "pico.wav")
        subprocess.run(["mpg123", "-q", "-w", wav, os.path.join(ROOT, "sounds", "pico.mp3")], check=True)

        # The floor: a long-lived native stream that plays on a trigger (node.latency 240: quantum 128).
        floor = []
        out = subprocess.run([os.path.join(bin_dir, "cued-pwprobe"), "--quantum", "240", "--rounds", str(max(3, rounds // 2))],
                             env=pw.environ(), capture_output=True, text=True).stdout
        for line in out.splitlines():
            if line.startswith("trigger_to_heard_ms="):
                floor.append(float(line.split("=", 1)[1]))
        record(benchmark="heard-first", server="pipewire", contender="native pw_stream floor (node.latency 240)", **summary(floor))

        native, status = measure_cued(bin_dir, pw, "pipewire", rounds)
        quantum = status["device"].get("quantumFrames")
        record(benchmark="heard-first", server="pipewire", contender="cued play, open connection (--device pipewire)",
               quantum=quantum, underruns=status["underruns"], **summary(native["open"]))
        record(benchmark="heard-first", server="pipewire", contender="cuectl play (--device pipewire)", **summary(native["cuectl"]))
        resumed, status = measure_cued(bin_dir, pw, "pipewire", rounds, paused=True)
        record(benchmark="heard-first", server="pipewire", contender="cued play, open connection, stream paused before each (--device pipewire)",
               pauses=status["device"].get("pauses"), underruns=status["underruns"], **summary(resumed["open"]))
        record(benchmark="heard-first", server="pipewire", contender="cuectl play, stream paused before each (--device pipewire)", **summary(resumed["cuectl"]))

        if os.path.exists(PLUGIN):
            conf = os.path.join(work, "asound.conf")
            open(conf, "w").write(f'</usr/share/alsa/alsa.conf>\npcm_type.pipewire {{ lib "{PLUGIN}" }}\npcm.pw {{ type pipewire }}\n')
            plugin, status = measure_cued(bin_dir, pw, "alsa:pw", rounds, env={"ALSA_CONFIG_PATH": conf})
            device = status["device"]
            record(benchmark="heard-first", server="pipewire", contender="cued play, open connection (--device alsa:pw, the ALSA plugin)",
                   period=device.get("periodFrames"), buffer=device.get("bufferFrames"), fill_target=device.get("fillTargetFrames"),
                   underruns=status["underruns"], **summary(plugin["open"]))

        # pw-play and pactl play-sample, with a quiet stream of cued's keeping the graph running.
        keeper = Cued(bin_dir, pw, "pipewire", os.path.join(ROOT, "sounds"), extra=["--idle-timeout", "60", "--pipewire-latency", "1024"])
        keeper.client.request("play", cue="pico", volume=0)
        time.sleep(0.3)
        tools = {"pw-play": ["pw-play", "--latency=256", wav]}
        if pw.start_pulse():
            subprocess.run(["pactl", "upload-sample", wav, "pico"], env=pw.environ(**pw.pulse_env), check=True)
            tools["pactl play-sample (pipewire-pulse)"] = ["pactl", "play-sample", "pico"]
        monitor = Monitor(bin_dir, pw, seconds=120)
        starts = {name: [] for name in tools}
        for i in range(rounds):
            for name, command in tools.items():
                start = time.monotonic_ns()
                subprocess.Popen(command, env=pw.environ(**(pw.pulse_env if pw.pulse else {})), stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL).wait()
                starts[name].append(start)
                time.sleep(gap(i) + 0.15)
        capture = monitor.finish()
        keeper.stop()
        for name, values in starts.items():
            record(benchmark="heard-first", server="pipewire", contender=name, **summary(capture.onsets(values, window_ns=600_000_000)))
    finally:
        pw.stop()
        shutil.rmtree(work, ignore_errors=True)


def page_under_load(cued, seconds, monitor=None):
    """Pages 10 times a second for `seconds`, first unloaded, then with stress-ng --cpu 2 running.

    Returns, per load, the starts, the voices, the underruns counted and the finished events."""
    cued.client.request("subscribe", kinds=["finished"])
    cued.client.request("play", cue="pico", volume=0)
    time.sleep(0.3)
    runs = []
    for loaded in (False, True):
        stress = subprocess.Popen(["stress-ng", "--cpu", "2", "--timeout", f"{seconds + 2}s", "--quiet"]) if loaded else None
        time.sleep(1 if loaded else 0)
        before = cued.client.request("status")["underruns"]
        starts, voices = [], []
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            start = time.monotonic_ns()
            # tick: 30 ms, so each onset follows silence (the pager's own cues last 120 ms).
            reply = cued.client.request("play", cue="tick")
            starts.append(start)
            voices.append(reply.get("voice"))
            time.sleep(0.1)
        time.sleep(0.5)
        status = cued.client.request("status")
        after = status["underruns"]
        if stress:
            stress.wait()
        # What the latency rule made of them, so far (status: raises, and the xruns it ignored by reason).
        latency = {k: v for k, v in status.get("device", {}).items() if k in ("latencyFrames", "latencyRaises", "ignoredXruns")}
        runs.append(("stress-ng --cpu 2" if loaded else "unloaded", starts, voices, after - before, latency))
    cued.client.request("ping")
    finished_ok = {e.get("voice") for e in cued.client.events if e.get("event") == "finished" and e.get("successfully")}
    return runs, finished_ok


def heard_under_load(record, bin_dir, quick, pulse_server, devices=None):
    """stress-ng --cpu 2 while a client pages 10 times a second: on PipeWire (native and through the
    ALSA plugin; onsets from the monitor) and on PulseAudio (underruns and completions; parec has no
    cycle times, so no onsets there). `devices` (bench/run.py --load-devices) keeps only some of
    pipewire, alsa:pw, floor, pulse:t and pulseaudio:t."""
    devices = set(devices or ("pipewire", "alsa:pw", "floor", "pulse:t", "pulseaudio:t"))
    seconds = 10 if quick else 60
    if not shutil.which("stress-ng"):
        record(benchmark="heard-under-load", error="stress-ng is not installed (scripts/install-deps.sh --tools)")
        return
    pw = PipeWire()
    work = tempfile.mkdtemp(prefix="cued-bench-load-")
    try:
        conf = os.path.join(work, "asound.conf")
        open(conf, "w").write(f'</usr/share/alsa/alsa.conf>\npcm_type.pipewire {{ lib "{PLUGIN}" }}\npcm.pw {{ type pipewire }}\n')
        for device, env in (("pipewire", None), ("alsa:pw", {"ALSA_CONFIG_PATH": conf})):
            if device not in devices:
                continue
            cued = Cued(bin_dir, pw, device, os.path.join(ROOT, "sounds"), extra=["--idle-timeout", "60"], env=env)
            try:
                monitor = Monitor(bin_dir, pw, seconds=2 * seconds + 30)
                runs, finished_ok = page_under_load(cued, seconds)
                capture = monitor.finish()
                for name, starts, voices, xruns, latency in runs:
                    record(benchmark="heard-under-load", server="pipewire", device=device, load=name, seconds=seconds, plays=len(starts),
                           finished_successfully=sum(1 for v in voices if v in finished_ok), underruns=xruns,
                           underruns_per_minute=round(60 * xruns / seconds, 1), **summary(capture.onsets(starts)), **latency)
            finally:
                cued.stop()
        # The same load under the floor: a plain C pw_stream (cued-pwprobe) counts the graph cycles
        # the server skipped, which every client sees, cued or not.
        for loaded in (False, True) if "floor" in devices else ():
            stress = subprocess.Popen(["stress-ng", "--cpu", "2", "--timeout", f"{seconds + 5}s", "--quiet"]) if loaded else None
            time.sleep(1 if loaded else 0)
            out = subprocess.run([os.path.join(bin_dir, "cued-pwprobe"), "--quantum", "240", "--rounds", str(seconds)],
                                 env=pw.environ(), capture_output=True, text=True).stdout
            if stress:
                stress.terminate()
                stress.wait()
            xruns = [line.split("=", 1)[1] for line in out.splitlines() if line.startswith("xruns=")]
            record(benchmark="heard-under-load", server="pipewire", device="native pw_stream floor (cued-pwprobe)",
                   load="stress-ng --cpu 2" if loaded else "unloaded", rounds=seconds, skipped_cycles=int(xruns[-1]) if xruns else None)
    finally:
        pw.stop()
        shutil.rmtree(work, ignore_errors=True)
    heard_under_load_on_pulseaudio(record, bin_dir, seconds, pulse_server, pw,
                                   devices=[d for d in ("pulse:t", "pulseaudio:t") if d in devices])


class NoPipeWire:
    """The environment `Cued` takes, when no PipeWire runs (the PulseAudio-only measurement)."""
    env = {}

    def environ(self, **extra):
        return {**os.environ, "XDG_CONFIG_HOME": "/nonexistent", **extra}


def heard_under_load_on_pulseaudio(record, bin_dir, seconds, pulse_server, pw=NoPipeWire(), devices=("pulse:t", "pulseaudio:t")):
    """The PulseAudio half of `heard_under_load`: through ALSA's pulse plugin (`pulse:t`) and cued's
    native stream (`pulseaudio:t`, which rewrites queued silence when a cue starts). Underruns are
    the engine's (plugin) or the server's underflows (native)."""
    for device in devices:
        pulse, env = pulse_server()
        try:
            cued = Cued(bin_dir, pw, device, os.path.join(ROOT, "sounds"), extra=["--idle-timeout", "60"], env=env)
            try:
                runs, finished_ok = page_under_load(cued, seconds)
                for name, starts, voices, xruns, latency in runs:
                    record(benchmark="heard-under-load", server="pulseaudio", device=device, load=name, seconds=seconds, plays=len(starts),
                           finished_successfully=sum(1 for v in voices if v in finished_ok), underruns=xruns,
                           underruns_per_minute=round(60 * xruns / seconds, 1), **latency)
            finally:
                cued.stop()
        finally:
            pulse.terminate()


def heard_idle(record, bin_dir, quick):
    """CPU: cued after the idle window (ticks), and cued plus PipeWire open and silent (% of a core)."""
    window = 5 if quick else 20
    pw = PipeWire()
    try:
        server = pw.pid("pipewire")
        # The default (quantum 128, paused 1.5 s after the last cue), then never paused at three quanta.
        for latency, pause in (("128", None), ("128", "0"), ("256", "0"), ("1024", "0")):
            extra = ["--idle-timeout", str(window + 2), "--pipewire-latency", latency]
            if pause is not None:
                extra += ["--pipewire-pause-after", pause]
            cued = Cued(bin_dir, pw, "pipewire", os.path.join(ROOT, "sounds"), extra=extra)
            try:
                cued.client.request("play", cue="pico", volume=0)
                time.sleep(0.5)
                c0, s0, t0 = cued.cpu_ticks(), process_ticks(server), time.monotonic()
                time.sleep(window)
                c1, s1, t1 = cued.cpu_ticks(), process_ticks(server), time.monotonic()
                span = (t1 - t0) * CLOCK_TICKS
                record(benchmark="heard-idle", device="pipewire", pipewire_latency=int(latency), case="open and silent",
                       pipewire_pause_after="default (1.5 s)" if pause is None else pause,
                       cued_percent=round(100 * (c1 - c0) / span, 2), server_percent=round(100 * (s1 - s0) / span, 2),
                       together_percent=round(100 * (c1 - c0 + s1 - s0) / span, 2))
                if pause is None:
                    time.sleep(3)  # past the idle window: the node is gone
                    c0, s0 = cued.cpu_ticks(), process_ticks(server)
                    time.sleep(window)
                    record(benchmark="heard-idle", device="pipewire", case="after the idle window", seconds=window,
                           cued_ticks=cued.cpu_ticks() - c0, server_ticks=process_ticks(server) - s0)
            finally:
                cued.stop()
    finally:
        pw.stop()
