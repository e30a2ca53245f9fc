import Foundation

/// The waiting-room page address as `vwr_html` carries it (percent-encoded but for
/// alphanumerics), remembered for the last address asked: replies repeat it, and Foundation's
/// encoding is the slowest step of a reply.
struct NetFUNNELEncodedPageMemo: Sendable {
    private var page: String?
    private var encodedPage = ""
    private var host: String?
    private var port = 0
    private var encodedDefault = ""

    /// `page`, encoded.
    mutating func encoded(_ page: String) -> String {
        if let last = self.page, last == page { return encodedPage }
        self.page = page
        encodedPage = Self.encode(page)
        return encodedPage
    }

    /// The emulator's own waiting-room page on `host:port`, encoded.
    mutating func encoded(host: String, port: Int) -> String {
        if let last = self.host, last == host, self.port == port { return encodedDefault }
        self.host = host
        self.port = port
        encodedDefault = Self.encode("http://\(host):\(port)/_emulator/netfunnel/waiting-room.html")
        return encodedDefault
    }

    static func encode(_ page: String) -> String {
        page.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? page
    }
}
