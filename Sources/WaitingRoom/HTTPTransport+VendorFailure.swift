extension HTTPTransport {
    /// Sends `request` for a vendor's client, its failures in the vendor's terms: a
    /// ``WaitingRoomError`` keeps its kind and gets `vendor` (and `failureCode` when it has no
    /// vendor code), a cancellation is `.networkOffline` with `cancelledCode`, any other error
    /// `.networkOffline` with `failureCode` and the error's description.
    package func send(
        _ request: HTTPRequest, vendor: String, failureCode: Int, cancelledCode: Int
    ) async throws(WaitingRoomError) -> HTTPResponse {
        do { return try await send(request) } catch let e as WaitingRoomError {
            var e = e
            e.vendor = vendor
            if e.vendorCode == nil { e.vendorCode = failureCode }
            throw e
        } catch is CancellationError {
            throw WaitingRoomError(.networkOffline, vendor: vendor, vendorCode: cancelledCode, message: "cancelled")
        } catch {
            throw WaitingRoomError(.networkOffline, vendor: vendor, vendorCode: failureCode, message: "\(error)")
        }
    }
}
