import NIOCore

/// One HTTP request as a vendor backend builds it.
public struct HTTPRequest: Sendable, Hashable {
    /// `GET`, `POST`, …
    public var method: String
    /// The absolute URL.
    public var url: String
    /// Header fields in order.
    public var headers: HTTPHeaderList
    /// The body, if any.
    public var body: [UInt8]?
    /// The deadline for the whole exchange (connect, send, receive the full body). The SDK
    /// enforces it itself; `nil` means the transport's default.
    public var timeout: Duration?
    /// Whether 3xx answers are followed (off by default: vendors read redirects themselves).
    public var followRedirects: Bool
    /// What the request is to its vendor, for metrics and traces (``VendorRequestLabel``); a
    /// request without one is sent as it is.
    package var label: VendorRequestLabel?

    /// Creates a request.
    public init(
        method: String = "GET", url: String, headers: HTTPHeaderList = [], body: [UInt8]? = nil,
        timeout: Duration? = nil, followRedirects: Bool = false, label: VendorRequestLabel? = nil
    ) {
        self.label = label
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.followRedirects = followRedirects
    }
}

/// One HTTP response, with its body fully read.
public struct HTTPResponse: Sendable, Hashable {
    /// The status code.
    public var status: Int
    /// Header fields in order.
    public var headers: HTTPHeaderList
    /// The body.
    public var body: [UInt8]
    /// The URL that answered (differs from the request's when redirects were followed).
    public var url: String

    /// Creates a response.
    public init(status: Int, headers: HTTPHeaderList = [], body: [UInt8] = [], url: String) {
        self.status = status
        self.headers = headers
        self.body = body
        self.url = url
    }

    /// The body decoded as UTF-8 (invalid bytes replaced).
    package var text: String { String(decoding: body, as: UTF8.self) }
}

/// Ordered HTTP header fields with case-insensitive lookup.
public struct HTTPHeaderList: Sendable, Hashable, ExpressibleByArrayLiteral, Sequence {
    /// The fields, in order.
    package var fields: [Field]

    /// One header field.
    public struct Field: Sendable, Hashable {
        public var name: String
        public var value: String
        package init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    public init(_ pairs: [(String, String)] = []) { fields = pairs.map { Field(name: $0.0, value: $0.1) } }
    public init(arrayLiteral elements: (String, String)...) { self.init(elements) }

    /// The first value of `name`, compared case-insensitively.
    package func value(for name: String) -> String? {
        fields.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// Every value of `name`, compared case-insensitively.
    package func values(for name: String) -> [String] {
        fields.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
    }

    /// Appends a field.
    package mutating func add(_ name: String, _ value: String) { fields.append(Field(name: name, value: value)) }

    /// Replaces every field named `name` with one.
    package mutating func set(_ name: String, _ value: String) {
        fields.removeAll { $0.name.caseInsensitiveCompare(name) == .orderedSame }
        fields.append(Field(name: name, value: value))
    }

    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }
}

/// Sends HTTP requests for vendor backends. The core ships no implementation: the module
/// `WaitingRoomHTTP` has `AsyncHTTPTransport` (on AsyncHTTPClient), the default of the vendors,
/// the CLI and the Lua host; tests and apps may inject their own.
///
/// Requirements: honour ``HTTPRequest/timeout`` for the whole exchange; stop the request when
/// the calling task is cancelled (throwing `CancellationError`); follow redirects only when
/// ``HTTPRequest/followRedirects`` is set; report failures as ``WaitingRoomError`` with kind
/// `.networkOffline` (cannot connect, connection reset), `.networkTimeout` (deadline passed)
/// or `.invalidResponse` (not HTTP, or a body over the size limit).
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns the complete response (any status code is a response).
    func send(_ request: HTTPRequest) async throws -> HTTPResponse
    /// The event loops the transport runs on, if it has any: once it is the process's default
    /// (``HTTPTransportSystem``), the core's timers (``SystemClock`` sleeps) fire there instead of
    /// on the core's own timer queue. Default nil.
    var timerEventLoops: (any EventLoopGroup)? { get }
}

extension HTTPTransport {
    /// None by default.
    public var timerEventLoops: (any EventLoopGroup)? { nil }
}
