#if Vapor
    import Testing
    import Vapor
    @testable import WaitingRoomGateVapor

    /// The request target the Vapor adapter hands on: origin form as received, an absolute-form
    /// target by its path and query (as Hummingbird's HTTP/1 codec does), nothing for what Vapor's
    /// `URI` could not parse.
    @Suite struct VaporGateTargetTests {
        @Test func originFormIsKept() {
            #expect(
                VaporGateHead.target(URI(string: "/shop/cart?queueittoken=e_sale~q_1%7E&x=1"))
                    == "/shop/cart?queueittoken=e_sale~q_1%7E&x=1")
        }

        @Test func absoluteFormCountsByPathAndQuery() {
            #expect(VaporGateHead.target(URI(string: "http://shop.example/shop/cart?x=1")) == "/shop/cart?x=1")
            #expect(VaporGateHead.target(URI(string: "http://shop.example")) == "/")
        }

        @Test func anUnparsedTargetIsNone() {
            #expect(VaporGateHead.target(URI(string: "*")) == nil)
        }
    }
#endif
