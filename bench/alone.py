"""Heard first when cued is alone on the graph, and after a quiet spell (issue 31).

bench/heard.py measures with the graph already running; here nothing else plays. The private PipeWire
has Debian's default clock (quantum 1024, min 16: Tests/PipeWire/pipewire.conf) and the recorder of the
sink's monitor (`cued-pwprobe record`) is passive and asks for no latency, so the quantum of every
cycle is what cued asked for, as on a desktop where nothing else plays. The recording keeps each
cycle's quantum, so each cue's onset comes with the quantum that carried it.

The floor is a native pw_stream kept open at node.latency 128 that plays a tone when asked
(`cued-pwprobe floor`). While it is connected it holds the graph at 128, so it is never connected
while cued plays: the two alternate in one run. cued's device-open and 3 s cases come first with the
floor out of the graph; the floor plays its own cases inside cued's quiet minutes (connected from 2 s
after cued's cue to 50 s: up to 3 tones 1 s apart, 3 after 3 s of quiet, and one after about 35 s of
streaming silence; the graph is then empty for about 10 s, past WirePlumber's 5 s suspend, before
cued's next cue). What does not fit, and in --quick mode (no quiet minutes) all of it, plays after
cued's cases.

Cases (bench/run.py --only heard-alone, heard-pulse, idle-servers):
  heard-alone   per load (unloaded, stress-ng --cpu 2): `play` on an open connection 1 s after the
                previous cue, after 3 s of quiet and after 60 s of quiet, each beside the floor's
                same case; medians, the quanta that carried the cues, the ratio to the floor
  heard-pulse   cued's native PulseAudio stream (`cuectl play`, --device pulseaudio) against `pactl
                play-sample`, alternating, through pipewire-pulse on the same graph: absolute onsets
  idle-servers  cued's CPU ticks and context switches over 10 s once quiet, on PipeWire, PulseAudio
                and ALSA, inside the idle window and after it (whatever cued then keeps)
"""
import array, os, re, shutil, statistics, subprocess, tempfile, time

from heard import ROOT, Cued, Monitor, NoPipeWire, PipeWire, percentile, process_ticks

FLOOR_QUANTUM = 128
CUE_SECONDS = 0.1  # pico and the floor's tone both last 100 ms
TONE_EXTENT = 4799  # the floor's tone sounds from its frame 1 (sin 0 = 0) to its last


class Floor:
    """`cued-pwprobe floor`: a native pw_stream kept open at node.latency 128 that plays a tone on request."""

    def __init__(self, bin_dir, pw):
        self.process = subprocess.Popen([os.path.join(bin_dir, "cued-pwprobe"), "floor", "--quantum", str(FLOOR_QUANTUM)],
                                        env=pw.environ(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def command(self, line):
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline().strip()
        if not answer or answer.startswith("error"):
            raise RuntimeError(f"cued-pwprobe floor: {line}: {answer or 'exited'}")
        return answer

    def play(self):
        """Asks for a tone; returns the monotonic ns of the request."""
        return int(self.command("play").split("=", 1)[1])

    def stop(self):
        self.process.stdin.close()
        self.process.wait(timeout=10)


class Timeline:
    """Waits measured from the start of the last cue, with a small offset that walks across the graph
    cycle (up to one 1024-frame quantum) so onsets sample every phase of it."""

    def __init__(self):
        self.last = time.monotonic()
        self.count = 0

    def quiet(self, seconds):
        """Sleeps until `seconds` of silence have followed the last cue (which lasts CUE_SECONDS)."""
        self.count += 1
        until = self.last + CUE_SECONDS + seconds + (self.count * 0.0071) % 0.0213
        time.sleep(max(0.0, until - time.monotonic()))

    def cue(self, start_ns):
        self.last = start_ns / 1e9
        return start_ns


def cued_play(cued):
    start = time.monotonic_ns()
    cued.client.reply(cued.client.send("play", cue="pico"))
    return start


def floor_window(floor, timeline, starts, plays_open, plays_quiet, long_quiet_until=None):
    """The floor's cases in one stretch: connect, `plays_open` tones 1 s apart, `plays_quiet` tones
    each after 3 s of quiet, and, with `long_quiet_until` (monotonic s), one more then; disconnect."""
    floor.command("connect")
    timeline.cue(time.monotonic_ns())
    for _ in range(plays_open):
        timeline.quiet(1.0 - CUE_SECONDS)
        starts["open"].append(timeline.cue(floor.play()))
    for _ in range(plays_quiet):
        timeline.quiet(3.0)
        starts["quiet3"].append(timeline.cue(floor.play()))
    if long_quiet_until is not None:
        quiet_since = timeline.last + CUE_SECONDS
        time.sleep(max(0.0, long_quiet_until - time.monotonic()))
        starts["long"].append(timeline.cue(floor.play()))
        starts["long_quiet_s"].append(timeline.last - quiet_since)
    time.sleep(0.3)
    floor.command("disconnect")


def alone_run(bin_dir, pw, counts, loaded, extent):
    """One load: cued's cases, the floor between them; returns (what each start heard, cued's status)."""
    minutes = counts["minute"]
    seconds = 30 + counts["open"] * 1.1 + counts["quiet3"] * 3.2 + minutes * 61 + counts["floor_open"] * 1.1 + counts["floor_quiet3"] * 3.2
    stress = subprocess.Popen(["stress-ng", "--cpu", "2", "--timeout", f"{int(seconds) + 10}s", "--quiet"]) if loaded else None
    cued = Cued(bin_dir, pw, "pipewire", os.path.join(ROOT, "sounds"))  # cued's defaults: nothing tuned
    floor = Floor(bin_dir, pw)
    monitor = None
    try:
        time.sleep(1 if loaded else 0.2)
        monitor = Monitor(bin_dir, pw, seconds=int(seconds) + 30)
        cued_starts = {"open": [], "quiet3": [], "minute": []}
        floor_starts = {"open": [], "quiet3": [], "long": [], "long_quiet_s": []}
        timeline = Timeline()
        # Device open: a silent play opens it, then each cue 1 s after the previous one.
        timeline.cue(cued_play(cued))
        for _ in range(counts["open"]):
            timeline.quiet(1.0 - CUE_SECONDS)
            cued_starts["open"].append(timeline.cue(cued_play(cued)))
        for _ in range(counts["quiet3"]):
            timeline.quiet(3.0)
            cued_starts["quiet3"].append(timeline.cue(cued_play(cued)))
        # The floor's short cases, at most 3 + 3 in each quiet minute (about 13 s, leaving 35 s of quiet
        # before its long case); what does not fit plays after the last minute.
        left_open, left_quiet = counts["floor_open"], counts["floor_quiet3"]
        for _ in range(minutes):
            quiet_began = timeline.last + CUE_SECONDS
            time.sleep(max(0.0, quiet_began + 2 - time.monotonic()))
            plays_open, plays_quiet = min(3, left_open), min(3, left_quiet)
            left_open, left_quiet = left_open - plays_open, left_quiet - plays_quiet
            floor_window(floor, Timeline(), floor_starts, plays_open, plays_quiet, long_quiet_until=quiet_began + 50)
            timeline.quiet(60.0)
            cued_starts["minute"].append(timeline.cue(cued_play(cued)))
        if left_open or left_quiet:
            timeline.quiet(3.0)
            floor_window(floor, Timeline(), floor_starts, left_open, left_quiet)
        time.sleep(0.5)
        status = cued.client.request("status")
        capture = monitor.finish()
        monitor = None
        heard = {("cued", case): capture.heard(values, extent) for case, values in cued_starts.items()}
        heard.update({("floor", case): capture.heard(values, TONE_EXTENT) for case, values in floor_starts.items() if case != "long_quiet_s"})
        return heard, floor_starts["long_quiet_s"], status
    finally:
        if monitor:
            monitor.process.kill()
            monitor.process.wait()
        floor.stop()
        cued.stop()
        if stress:
            stress.terminate()
            stress.wait()


def expected_extent():
    """Frames of pico above the onset threshold, decoded as cued decodes it: a cue that sounds
    shorter on the monitor lost its head (the recording started late)."""
    raw = subprocess.run(["mpg123", "-q", "-e", "f32", "-s", os.path.join(ROOT, "sounds", "pico.mp3")],
                         capture_output=True, check=True).stdout
    samples = array.array("f")
    samples.frombytes(raw[: len(raw) // 4 * 4])
    loud = [i for i, v in enumerate(samples) if abs(v) > 1e-4]  # mono at 48 kHz
    return loud[-1] - loud[0] + 1


def describe(heard):
    onsets = [h["onset"] for h in heard if h["onset"] is not None]
    fields = dict(heard=len(onsets), of=len(heard))
    if onsets:
        fields.update(median_ms=round(statistics.median(onsets), 2), p90_ms=round(percentile(onsets, 90), 2),
                      min_ms=round(min(onsets), 2), max_ms=round(max(onsets), 2))
    quanta = {}
    for h in heard:
        if h["quantum"] is not None:
            quanta[h["quantum"]] = quanta.get(h["quantum"], 0) + 1
    fields["quanta"] = {str(q): n for q, n in sorted(quanta.items())}
    fields["heads_restored"] = sum(1 for h in heard if h["cut"])
    return fields


CASES = {"open": "play on an open connection, 1 s after the previous cue", "quiet3": "after 3 s of quiet",
         "minute": "after 60 s of quiet"}


def heard_alone(record, bin_dir, quick, minutes=None):
    """bench/run.py --only heard-alone: see the module's docstring. `minutes`: quiet minutes per load
    (default 5 in full mode, none in --quick)."""
    if minutes is None:
        minutes = 0 if quick else 5
    counts = dict(open=4, quiet3=2, minute=0, floor_open=4, floor_quiet3=2) if quick else \
        dict(open=12, quiet3=10, minute=minutes, floor_open=15, floor_quiet3=15)
    counts["minute"] = minutes
    if not minutes:
        record(benchmark="heard-alone", case=CASES["minute"], skipped="--quick (a minute per sample)" if quick else "--heard-minutes 0")
    loads = [False, True]
    if not shutil.which("stress-ng"):
        loads = [False]
        record(benchmark="heard-alone", load="stress-ng --cpu 2", skipped="stress-ng is not installed (scripts/install-deps.sh --tools)")
    extent = expected_extent()
    pw = PipeWire()
    try:
        for loaded in loads:
            load = "stress-ng --cpu 2" if loaded else "unloaded"
            heard, long_quiet, status = alone_run(bin_dir, pw, counts, loaded, extent)
            device = status.get("device", {})
            floors = {}
            for case in ("open", "quiet3", "long"):
                if case == "long" and not minutes:
                    continue
                fields = describe(heard[("floor", case)])
                floors[case] = fields.get("median_ms")
                if case == "long":
                    fields["quiet_s"] = [round(s, 1) for s in long_quiet]
                label = CASES.get(case) or f"after {int(min(long_quiet))} s or more of quiet (streaming silence meanwhile)"
                record(benchmark="heard-alone", load=load, who=f"floor: native pw_stream kept open at node.latency {FLOOR_QUANTUM}",
                       case=label, **fields)
            for case in ("open", "quiet3", "minute"):
                if case == "minute" and not minutes:
                    continue
                fields = describe(heard[("cued", case)])
                floor = floors["long" if case == "minute" and floors.get("long") else ("open" if case == "open" else "quiet3")]
                if floor and fields.get("median_ms") is not None:
                    fields["ratio_to_floor"] = round(fields["median_ms"] / floor, 2)
                record(benchmark="heard-alone", load=load, who="cued play, --device pipewire (defaults)", case=CASES[case], **fields)
            record(benchmark="heard-alone", load=load, who="cued status at the end", underruns=status.get("underruns"),
                   **{k: v for k, v in device.items() if re.search(r"latency|raise|paus|quantum|xrun|state", k, re.I)})
    finally:
        pw.stop()


def heard_pulse(record, bin_dir, quick):
    """`cuectl play` with cued's native PulseAudio stream against `pactl play-sample`, both through
    pipewire-pulse on the private PipeWire, alternating; onsets from the passive monitor recording
    (absolute, unlike bench/run.py's `shell` case on a PulseAudio server, whose parec capture has no
    clock). Device open: the two alternate 0.6 s apart; after quiet: 3 s of silence before each."""
    pairs_open, pairs_quiet = (3, 2) if quick else (10, 8)
    pw = PipeWire()
    work = tempfile.mkdtemp(prefix="cued-bench-pulse-")
    try:
        if not pw.start_pulse():
            record(benchmark="heard-pulse", skipped="pipewire-pulse did not start (libpipewire-module-protocol-pulse)")
            return
        wav = os.path.join(work, "pico.wav")
        subprocess.run(["mpg123", "-q", "-w", wav, os.path.join(ROOT, "sounds", "pico.mp3")], check=True)
        env = pw.environ(**pw.pulse_env)
        subprocess.run(["pactl", "upload-sample", wav, "pico"], env=env, check=True)
        cued = Cued(bin_dir, pw, "pulseaudio", os.path.join(ROOT, "sounds"), env=pw.pulse_env)
        commands = {"cuectl play (--device pulseaudio, native stream)": [os.path.join(bin_dir, "cuectl"), "play", "pico", "--socket", cued.socket],
                    "pactl play-sample": ["pactl", "play-sample", "pico"]}
        try:
            monitor = Monitor(bin_dir, pw, seconds=int(pairs_open * 1.5 + pairs_quiet * 7) + 30)
            starts = {(name, case): [] for name in commands for case in ("open", "quiet3")}
            timeline = Timeline()
            subprocess.run(commands["pactl play-sample"], env=env, check=True)  # both warmed once
            cued.client.request("play", cue="pico", volume=0)
            timeline.cue(time.monotonic_ns())
            for case, pairs, quiet in (("open", pairs_open, 0.5), ("quiet3", pairs_quiet, 3.0)):
                for _ in range(pairs):
                    for name, command in commands.items():
                        timeline.quiet(quiet)
                        start = time.monotonic_ns()
                        subprocess.run(command, env=env, stdout=subprocess.DEVNULL, check=True)
                        starts[(name, case)].append(timeline.cue(start))
            time.sleep(0.8)
            capture = monitor.finish()
            status = cued.client.request("status")
        finally:
            cued.stop()
        for case in ("open", "quiet3"):
            medians = {}
            for name in commands:
                fields = describe(capture.heard(starts[(name, case)]))
                medians[name] = fields.get("median_ms")
                record(benchmark="heard-pulse", server="pipewire-pulse", who=name,
                       case="device open, 0.6 s apart" if case == "open" else "after 3 s of quiet", **fields)
            cuectl, pactl = medians[next(iter(commands))], medians["pactl play-sample"]
            if cuectl and pactl:
                record(benchmark="heard-pulse", server="pipewire-pulse", case="device open" if case == "open" else "after 3 s of quiet",
                       ratio_cuectl_to_pactl=round(cuectl / pactl, 2), underruns=status.get("underruns"))
    finally:
        pw.stop()
        shutil.rmtree(work, ignore_errors=True)


def thread_switches(pid):
    """Context switches of every thread of `pid` so far (voluntary and not)."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            text = open(f"/proc/{pid}/task/{task}/status").read()
        except OSError:
            continue  # the thread ended meanwhile
        total += sum(int(v) for v in re.findall(r"ctxt_switches:\s+(\d+)", text))
    return total


def idle_servers(record, bin_dir, quick, pulse_server):
    """cued once quiet: CPU ticks and context switches of all its threads over 10 s (2 s in --quick),
    on PipeWire, PulseAudio and ALSA (ALSA's null PCM), after the idle window (whatever cued then
    keeps: a closed device, or a paused or corked stream) and, on the two servers, inside it once the
    last cue ended (the stream paused or still running). The server's ticks beside."""
    window = 2 if quick else 10
    work = tempfile.mkdtemp(prefix="cued-bench-idle-servers-")
    conf = os.path.join(work, "asound.conf")
    with open(conf, "w") as f:
        f.write("pcm.quiet { type null }\n")  # no card needed; without the stock conf's pulse hook
    pw = PipeWire()
    pulses = []
    try:
        backends = [("pipewire", "pipewire", pw, {}, pw.pid("pipewire"))]
        if shutil.which("pulseaudio"):
            # Bare (the end-to-end tests' server), and with module-suspend-on-idle as a desktop's default.pa loads it.
            for name, modules in (("pulseaudio", ()), ("pulseaudio, module-suspend-on-idle", ("module-suspend-on-idle",))):
                pulse, pulse_env = pulse_server(modules)
                pulses.append(pulse)
                backends.append((name, "pulseaudio:t", NoPipeWire(), pulse_env, pulse.pid))
        else:
            record(benchmark="idle-servers", backend="pulseaudio", skipped="no pulseaudio server installed (scripts/install-deps.sh --test)")
        backends.append(("alsa", "alsa:quiet", NoPipeWire(), {"ALSA_CONFIG_PATH": conf}, None))
        for name, device, server, env, server_pid in backends:
            # Measured from 6 s after the cue: past the idle window and the servers' own 5 s suspend of an idle sink.
            settle = 3.0 if quick else 6.0
            cases = [(f"after the idle window (1 s), from {settle:g} s after the cue", "1", settle)]
            if name != "alsa" and not quick:
                cases.append(("inside the idle window (60 s), from 2.5 s after the cue (past pipewire-pause-after, 1.5 s)", "60", 2.5))
            for case, idle_timeout, settle in cases:
                cued = Cued(bin_dir, server, device, os.path.join(ROOT, "sounds"), extra=["--idle-timeout", idle_timeout], env=env)
                try:
                    cued.client.request("play", cue="pico")
                    time.sleep(CUE_SECONDS + settle)
                    device_status = cued.client.request("status").get("device", {})
                    pid = cued.process.pid
                    ticks, switches = process_ticks(pid), thread_switches(pid)
                    server_ticks = process_ticks(server_pid) if server_pid else None
                    time.sleep(window)
                    fields = dict(cpu_ticks=process_ticks(pid) - ticks, context_switches=thread_switches(pid) - switches,
                                  threads=len(os.listdir(f"/proc/{pid}/task")))
                    if server_pid:
                        fields["server_ticks"] = process_ticks(server_pid) - server_ticks
                    record(benchmark="idle-servers", backend=name, device=device, case=case, seconds=window,
                           device_state=device_status.get("state"), paused=device_status.get("paused"), **fields)
                finally:
                    cued.stop()
    finally:
        for pulse in pulses:
            pulse.terminate()
            pulse.wait()
        pw.stop()
        shutil.rmtree(work, ignore_errors=True)
