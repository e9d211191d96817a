/// The release of cued this build belongs to (daemon, CLI and protocol together).
public let cuedVersion = "0.2.0"
