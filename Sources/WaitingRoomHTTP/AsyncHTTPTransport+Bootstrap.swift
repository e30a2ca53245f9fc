import WaitingRoom

extension AsyncHTTPTransport {
    /// Makes ``AsyncHTTPTransport/shared`` the process's default transport
    /// (``HTTPTransportSystem/bootstrap(_:)``) unless another was bootstrapped; returns the
    /// transport in use. `VendorRegistry.standard` and the `waitingroom` command call it.
    @discardableResult
    public static func bootstrapIfUnset() -> any HTTPTransport {
        HTTPTransportSystem.bootstrapIfUnset { AsyncHTTPTransport.shared }
    }
}
