import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// TCP ports on 127.0.0.1 for the child servers the package starts (chromedriver, the bench's
/// nginx, a throwaway PostgreSQL).
package enum LoopbackPort {
    /// A TCP port on 127.0.0.1 that nothing listened on a moment ago (the kernel's pick for
    /// port 0: bound, read back, released), or nil (`errno` says why).
    package static func free() -> Int? {
        #if os(Linux)
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        let port = Int(UInt16(bigEndian: address.sin_port))
        return bound && port > 0 ? port : nil
    }
}
