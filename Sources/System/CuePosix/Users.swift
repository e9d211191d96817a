#if canImport(Glibc)
import Glibc
#endif

/// Users and groups, as the system's name service knows them.
public enum Users {
  /// The group `name` names: a group name (`getgrnam_r`) or a decimal gid; nil when there is none.
  public static func groupID(named name: String) -> UInt32? {
    if let number = UInt32(name) { return number }
    var group = group()
    var result: UnsafeMutablePointer<group>? = nil
    var buffer = [CChar](repeating: 0, count: 16 * 1024)
    while true {
      let status = buffer.withUnsafeMutableBufferPointer { getgrnam_r(name, &group, $0.baseAddress, $0.count, &result) }
      if status == ERANGE && buffer.count < 1 << 20 {
        buffer = [CChar](repeating: 0, count: buffer.count * 4)
        continue
      }
      return status == 0 && result != nil ? group.gr_gid : nil
    }
  }
}
