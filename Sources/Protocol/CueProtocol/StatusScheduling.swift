/// `status`'s `scheduling` section (and the device's `mixingThread`): what the scheduler granted a thread.
extension StatusReply {
  /// The audio thread's scheduling: `fifo` or `rr` at a priority with who granted it, or `other`
  /// (time-sharing) with the reason when real-time was asked for and refused, and why RTKit did
  /// not grant it either when it was asked.
  public struct Scheduling: Sendable, Equatable {
    /// `fifo` (SCHED_FIFO), `rr` (SCHED_RR, what RTKit sets) or `other`.
    public var policy: String
    public var priority: Int?
    /// Who made the thread real-time: `sched_setscheduler` (the thread itself) or `rtkit`.
    public var via: String?
    /// Why the thread's own SCHED_FIFO request failed (`Operation not permitted`).
    public var refused: String?
    /// Why RTKit did not grant real-time either, when it was asked.
    public var rtkit: String?

    public init(policy: String, priority: Int? = nil, via: String? = nil, refused: String? = nil, rtkit: String? = nil) {
      (self.policy, self.priority, self.via, self.refused, self.rtkit) = (policy, priority, via, refused, rtkit)
    }

    var json: JSONValue {
      var members: [(String, JSONValue)] = [("policy", .string(policy))]
      if let priority { members.append(("priority", .int(priority))) }
      return .object(members + grantMembers(via: via, refused: refused, rtkit: rtkit))
    }

    init(json: JSONValue) throws(ProtocolError) {
      var fields = FieldReader(json)
      policy = try required(fields.string("policy"), "policy", in: "the status reply's scheduling")
      priority = try fields.integer("priority")
      (via, refused, rtkit) = try readGrant(&fields)
    }

    /// The real-time policy as people name it, with its priority (`SCHED_RR, priority 20`); nil when not real-time.
    public var realtimeText: String? {
      let name: String
      switch policy {
      case "fifo": name = "SCHED_FIFO"
      case "rr": name = "SCHED_RR"
      default: return nil
      }
      return priority.map { "\(name), priority \($0)" } ?? name
    }

    /// One line for people: `SCHED_RR, priority 20 (via RTKit)`, `SCHED_FIFO, priority 88 (set by
    /// pipewire)`, or `normal scheduling (real-time refused: Operation not permitted; RTKit: not running (…))`.
    public var summary: String {
      if let realtime = realtimeText {
        switch via {
        case "rtkit": return realtime + " (via RTKit)"
        case nil, "sched_setscheduler": return realtime
        case let server?: return realtime + " (set by \(server))"
        }
      }
      var why: [String] = []
      if let refused { why.append("real-time refused: \(refused)") }
      if let rtkit { why.append("RTKit: \(rtkit)") }
      return "normal scheduling" + (why.isEmpty ? "" : " (" + why.joined(separator: "; ") + ")")
    }
  }
}

extension StatusReply {
  /// The control thread's priority: its nice level now (`nice`), and `via` who set it
  /// (`setpriority`, `rtkit`), or why it was not raised (`refused`, and `rtkit` when RTKit was asked).
  /// Absent when `--nice-level 0` asked for nothing.
  public struct ControlThread: Sendable, Equatable {
    public var nice: Int
    public var via: String?
    public var refused: String?
    public var rtkit: String?

    public init(nice: Int, via: String? = nil, refused: String? = nil, rtkit: String? = nil) {
      (self.nice, self.via, self.refused, self.rtkit) = (nice, via, refused, rtkit)
    }

    var json: JSONValue {
      .object([("nice", .int(nice))] + grantMembers(via: via, refused: refused, rtkit: rtkit))
    }

    init(json: JSONValue) throws(ProtocolError) {
      var fields = FieldReader(json)
      nice = try required(fields.integer("nice"), "nice", in: "the status reply's controlThread")
      (via, refused, rtkit) = try readGrant(&fields)
    }

    /// One line for people: `nice -11 (via RTKit)`, or `nice 0 (refused: Permission denied; RTKit: …)`.
    public var summary: String {
      if let via { return "nice \(nice)" + (via == "rtkit" ? " (via RTKit)" : "") }
      var why: [String] = []
      if let refused { why.append("refused: \(refused)") }
      if let rtkit { why.append("RTKit: \(rtkit)") }
      return "nice \(nice)" + (why.isEmpty ? "" : " (" + why.joined(separator: "; ") + ")")
    }
  }
}

/// Who granted a thread's priority (`via`), or why neither cued nor RTKit did (`refused`, `rtkit`):
/// the members `scheduling`, `device.mixingThread` and `controlThread` share, each left out when nil.
private func grantMembers(via: String?, refused: String?, rtkit: String?) -> [(String, JSONValue)] {
  [("via", via), ("refused", refused), ("rtkit", rtkit)].compactMap { name, value in value.map { (name, .string($0)) } }
}

private func readGrant(_ fields: inout FieldReader) throws(ProtocolError) -> (via: String?, refused: String?, rtkit: String?) {
  (try fields.string("via"), try fields.string("refused"), try fields.string("rtkit"))
}
