import Foundation
import WaitingRoom

extension CheckContext {
    func run(_ promise: ConformancePromise) async throws {
        switch promise {
        case .passWithoutWaiting: try await passWithoutWaiting()
        case .tryPassNeverWaits: try await tryPassNeverWaits()
        case .queueThenPass: try await queueThenPass()
        case .block: try await endsAsDeclared(.block, capabilities.blockRoom, "block room")
        case .disabled: try await endsAsDeclared(.closed, capabilities.closedRoom, "closed room")
        case .errorKinds: try await errorKinds()
        case .completeOnce: try await completeOnce()
        case .cancelWhileWaiting: try await cancelWhileWaiting()
        case .restartWhileWaiting: try await restartWhileWaiting()
        case .finishedSessionRefuses: try await finishedSessionRefuses()
        case .duplicateJoin: try await duplicateJoin()
        case .duplicateReject: try await duplicateReject()
        case .lateSubscriber: try await lateSubscriber()
        case .streamsEnd: try await streamsEnd()
        case .boundHandlersSeeFutureEventsOnly: try await boundHandlers()
        case .faults: try await faults()
        case .passStore: try await passStoreCheck()
        }
    }

    // MARK: outcomes

    func passWithoutWaiting() async throws {
        let session = try makeProvider().enqueue(entry(.open))
        let log = EventCollector(session.events)
        let outcome = await awaitOutcome(of: session, "open room")
        expect(outcome, is: capabilities.openRoom, "open room")
        guard let outcome else { return }
        await waitUntil("open room: the outcome event on the stream") { log.events.contains(outcome.event) }
        let events = log.events
        recorder.expect(!events.contains { $0.name == .progress }, "open room: progress events while passing without waiting")
        recorder.expect(
            !events.contains(where: { if case .stateChanged(.waiting, _) = $0 { return true } else { return false } }),
            "open room: the session waited in line")
        checkLifecycle(events, "open room")
        try await cleanUp([session], "open room")
    }

    func tryPassNeverWaits() async throws {
        let provider = try makeProvider()
        let openEntry = entry(.open, user: "try-open")
        guard let opened = try await bounded("tryPass in the open room", { try await provider.tryPass(openEntry) }) else { return }
        recorder.expect(
            opened.disposition == .passed,
            "tryPass in the open room: expected passed, got \(opened.disposition.rawValue) \(opened.status.code)")
        recorder.expect(opened.pass != nil, "tryPass in the open room: a passed result without a pass")
        if let pass = opened.pass, pass.requiresCompletion {
            _ = try await bounded("release() of a tryPass pass") { try await provider.release(pass) }
        }
        let queued = entry(.queue, user: "try-queue")
        guard let inLine = try await bounded("tryPass in the queue room", { try await provider.tryPass(queued) }) else { return }
        recorder.expect(
            inLine.disposition == .queue,
            "tryPass in the queue room: expected queue, got \(inLine.disposition.rawValue) \(inLine.status.code)")
        recorder.expect(inLine.pass == nil, "tryPass in the queue room: a pass was handed out")
        try await expectNoKeyLeft("tryPass")
    }

    func queueThenPass() async throws {
        let provider = try makeProvider()
        var ahead: [WaitingSession] = []
        for n in 1...2 {
            let session = try provider.enqueue(entry(.queue, user: "ahead-\(n)"))
            guard await waitInLine(session, "user ahead-\(n)") else { return }
            ahead.append(session)
        }
        let subject = try provider.enqueue(entry(.queue, user: "subject"))
        let log = EventCollector(subject.events)
        guard await waitInLine(subject, "queue room") else { return }
        if capabilities.reportsPosition {
            await waitUntil("queue room: a progress event with a position") {
                log.events.contains { if case .progress(let p, _) = $0 { return p.ahead != nil } else { return false } }
            }
        }
        recorder.expect(subject.currentOutcome == nil, "queue room: an outcome before anyone was admitted")
        let room = emulator.room(.queue)
        let outcome = try await admitUntilOutcome(subject, others: ahead, room: room, "queue room")
        expect(outcome, is: capabilities.queuedPass, "queue room")
        if let outcome { await waitUntil("queue room: the outcome event on the stream") { log.events.contains(outcome.event) } }
        let events = log.events
        let progress = events.filter { $0.name == .progress }
        if capabilities.reportsPosition {
            recorder.expect(!progress.isEmpty, "queue room: no progress event while waiting")
        }
        if let firstProgress = events.firstIndex(where: { $0.name == .progress }),
            let waiting = events.firstIndex(where: { if case .stateChanged(.waiting, _) = $0 { return true } else { return false } })
        {
            recorder.expect(waiting < firstProgress, "queue room: progress before stateChanged(waiting)")
        }
        checkLifecycle(events, "queue room")
        try await cleanUp(ahead + [subject], "queue room")
    }

    func endsAsDeclared(_ room: ConformanceRoom, _ expected: ExpectedOutcome, _ what: String) async throws {
        let session = try makeProvider().enqueue(entry(room))
        let log = EventCollector(session.events)
        let outcome = await awaitOutcome(of: session, what)
        expect(outcome, is: expected, what)
        if let outcome { await waitUntil("\(what): the outcome event on the stream") { log.events.contains(outcome.event) } }
        checkLifecycle(log.events, what)
        try await cleanUp([session], what)
    }

    // MARK: errors and faults

    var entryRequest: ConformanceRequestKind? {
        let found = capabilities.requests.first { $0.phase == .entry }
        recorder.expect(found != nil, "the capabilities declare no request kind of phase entry")
        return found
    }

    func errorKinds() async throws {
        guard let request = entryRequest else { return }
        for action in ConformanceFaultAction.allCases {
            try await emulator.reset()
            let fault = ConformanceFault(request: request, action: action, count: capabilities.attemptsPerRequest)
            try await emulator.inject(fault)
            let session = try makeProvider().enqueue(entry(.open, user: "error-\(action.rawValue)"))
            let outcome = await awaitOutcome(of: session, "\(fault)")
            let expected = capabilities.faultOutcome(request, action)
            expect(outcome, is: expected, "\(fault)")
            if case .failed(let error)? = outcome {
                recorder.expect(error.vendor == vendorID, "\(fault): the error's vendor is \(error.vendor ?? "nil"), expected \(vendorID)")
                recorder.expect(error.vendorCode != nil, "\(fault): the error lost the vendor's code")
                recorder.expect(!error.message.isEmpty, "\(fault): the error has no message")
            }
            try await emulator.clearFaults()
            try await cleanUp([session], "\(fault)")
        }
    }

    func faults() async throws {
        recorder.expect(!capabilities.requests.isEmpty, "the capabilities declare no request kind to fault")
        for request in capabilities.requests {
            for action in ConformanceFaultAction.allCases {
                try await emulator.reset()
                let fault = ConformanceFault(request: request, action: action, count: capabilities.attemptsPerRequest)
                switch request.phase {
                case .entry: try await entryFault(fault)
                case .waiting: try await waitingFault(fault)
                case .completion: try await completionFault(fault)
                }
                try await emulator.clearFaults()
            }
        }
    }

    func withinBudget(since start: Date, _ what: String) {
        let elapsed = clock.now().timeIntervalSince(start)
        recorder.expect(
            elapsed <= capabilities.retryBudget.seconds,
            "\(what): the documented event came after \(elapsed) s of vendor time, beyond the retry budget of \(capabilities.retryBudget)")
    }

    func entryFault(_ fault: ConformanceFault) async throws {
        try await emulator.inject(fault)
        let start = clock.now()
        let session = try makeProvider().enqueue(entry(.open, user: "fault"))
        let log = EventCollector(session.events)
        let outcome = await awaitOutcome(of: session, "\(fault)")
        withinBudget(since: start, "\(fault)")
        expect(outcome, is: capabilities.faultOutcome(fault.request, fault.action), "\(fault)")
        try await emulator.clearFaults()
        try await cleanUp([session], "\(fault)")
        await waitUntil("\(fault): the event stream to end") { log.finished }
    }

    func waitingFault(_ fault: ConformanceFault) async throws {
        let session = try makeProvider().enqueue(entry(.queue, user: "fault"))
        let log = EventCollector(session.events)
        guard await waitInLine(session, "\(fault)") else { return }
        try await emulator.inject(fault)
        let start = clock.now()
        let outcome = await awaitOutcome(of: session, "\(fault)")
        withinBudget(since: start, "\(fault)")
        expect(outcome, is: capabilities.faultOutcome(fault.request, fault.action), "\(fault)")
        try await emulator.clearFaults()
        try await cleanUp([session], "\(fault)")
        await waitUntil("\(fault): the event stream to end") { log.finished }
    }

    func completionFault(_ fault: ConformanceFault) async throws {
        let session = try makeProvider().enqueue(entry(.open, user: "fault"))
        let log = EventCollector(session.events)
        guard let outcome = await awaitOutcome(of: session, "\(fault)") else { return }
        guard outcome.pass?.requiresCompletion == true else {
            recorder.fail("\(fault): a completion request kind is declared but the open room's pass holds no key (\(describe(outcome)))")
            return
        }
        try await emulator.inject(fault)
        let start = clock.now()
        guard let status = try await bounded("\(fault): complete()", { try await session.complete() }) else { return }
        withinBudget(since: start, "\(fault)")
        if let code = capabilities.completionFaultCode {
            recorder.expect(status.code == code, "\(fault): complete() reported \(status.code) (\(status.message)), declared \(code)")
        } else {
            recorder.fail("\(fault): a completion request kind is declared without completionFaultCode")
        }
        recorder.expect(
            session.state == .completed, "\(fault): the session is \(session.state.rawValue) after complete(), expected completed")
        try await emulator.clearFaults()
        try await expectNoKeyLeft("\(fault)")
        await waitUntil("\(fault): the event stream to end") { log.finished }
    }

    // MARK: the session's calls

    func completeOnce() async throws {
        let session = try makeProvider().enqueue(entry(.open))
        let log = EventCollector(session.events)
        guard let outcome = await awaitOutcome(of: session, "open room"), let pass = outcome.pass else {
            recorder.fail("completeOnce needs a pass in the open room, got \(describe(session.currentOutcome))")
            return
        }
        recorder.expect(
            pass.requiresCompletion == keys,
            keys ? "the pass holds no key, but the vendor declares keys" : "the pass holds a key, but the vendor declares none")
        let before = try await counters()
        let handled = HandlerLog()
        session.bind(.completed) { handled.append($0) }
        guard
            let both = try await bounded(
                "two concurrent complete() calls",
                {
                    async let first = session.complete()
                    async let second = session.complete()
                    return try await (first, second)
                })
        else { return }
        recorder.expect(both.0 == both.1, "two complete() calls returned different statuses: \(both.0) and \(both.1)")
        guard let third = try await bounded("a third complete()", { try await session.complete() }) else { return }
        recorder.expect(third == both.0, "a later complete() returned \(third), the first returned \(both.0)")
        recorder.expect(session.state == .completed, "after complete() the session is \(session.state.rawValue), expected completed")
        await waitUntil("the event stream to end after complete()") { log.finished }
        // a stream stays open for `completed` only when the pass holds a key; handlers always see it
        let completedEvents = log.events.filter { $0.name == .completed }.count
        let expectedOnStream = pass.requiresCompletion ? 1 : 0
        recorder.expect(
            completedEvents == expectedOnStream, "the stream carried \(completedEvents) completed events, expected \(expectedOnStream)")
        recorder.expect(handled.events.count == 1, "a handler saw \(handled.events.count) completed events, expected exactly 1")
        let after = try await counters()
        let returned = after.keysReturned - before.keysReturned
        recorder.expect(returned == (keys ? 1 : 0), "complete() ×3 returned \(returned) key(s) to the server, expected \(keys ? 1 : 0)")
        try await expectNoKeyLeft("complete()")
    }

    func cancelWhileWaiting() async throws {
        let session = try makeProvider().enqueue(entry(.queue))
        let log = EventCollector(session.events)
        guard await waitInLine(session, "cancel()") else { return }
        if keys { try await waitUntil("the emulator to count the user in line") { try await counters().waiting == 1 } }
        session.cancel()
        let outcome = await awaitOutcome(of: session, "cancel()")
        expect(outcome, is: .closed(code: capabilities.cancelCode), "cancel() while waiting")
        if keys {
            var last = ConformanceCounters()
            let left = try await holdsWithin(timeout) {
                last = try await counters()
                return last.waiting == 0 && last.keysLeftBehind == 0
            }
            recorder.expect(left, "cancel() while waiting did not return the waiting key (emulator counters: \(last))")
        }
        await waitUntil("the event stream to end after cancel()") { log.finished }
        checkLifecycle(log.events, "cancel()")
    }

    func restartWhileWaiting() async throws {
        let session = try makeProvider().enqueue(entry(.queue))
        let log = EventCollector(session.events)
        guard await waitInLine(session, "restart()") else { return }
        var before = try await counters()
        if keys {
            try await waitUntil("the emulator to count the user in line") { try await counters().waiting == 1 }
            before = try await counters()
        }
        guard try await bounded("restart() while waiting", { try await session.restart() }) != nil else { return }
        await waitUntil("a sessionRestarted event after restart()") { log.events.contains { $0.name == .sessionRestarted } }
        await waitUntil("restart(): the session to wait in line again") {
            let events = log.events
            guard let restarted = events.lastIndex(where: { $0.name == .sessionRestarted }) else { return false }
            return events[restarted...].contains { if case .stateChanged(.waiting, _) = $0 { return true } else { return false } }
        }
        // At least one: the new entry request may itself be retried by the vendor's documented
        // policy (a loaded machine can miss a 1 s request deadline after the server counted the
        // request), so counting exactly one more waited for a number that had already passed.
        try await waitUntil("restart(): a second entry request (entries were \(before.entries))") {
            try await counters().entries > before.entries
        }
        if keys {
            var last = ConformanceCounters()
            let returned = try await holdsWithin(timeout) {
                last = try await counters()
                return last.waiting == 1 && last.keysLeftBehind == 0
            }
            recorder.expect(returned, "restart() while waiting did not return the first waiting key (emulator counters: \(last))")
        }
        recorder.expect(
            session.currentOutcome == nil, "restart(): an outcome before anyone was admitted: \(describe(session.currentOutcome))")
        let outcome = try await admitUntilOutcome(session, others: [], room: emulator.room(.queue), "restart()")
        expect(outcome, is: capabilities.queuedPass, "the restarted session")
        if let outcome { await waitUntil("restart(): the outcome event on the stream") { log.events.contains(outcome.event) } }
        checkLifecycle(log.events, "restart()")
        try await cleanUp([session], "restart()")
    }

    func finishedSessionRefuses() async throws {
        let provider = try makeProvider()
        // ended by the vendor
        let blocked = try provider.enqueue(entry(.block))
        if let outcome = await awaitOutcome(of: blocked, "block room") {
            if blocked.state.isFinal {
                await expectInvalidUse("restart() after \(outcome.name)") { try await blocked.restart() }
                await expectInvalidUse("complete() after \(outcome.name)") { try await blocked.complete() }
            } else {
                recorder.fail("the block room's outcome \(describe(outcome)) is not final")
            }
        }
        // ended by the user
        let cancelled = try provider.enqueue(entry(.queue, user: "cancelled"))
        if await waitInLine(cancelled, "finished session") {
            await expectInvalidUse("complete() while waiting") { try await cancelled.complete() }
            cancelled.cancel()
            if let outcome = await awaitOutcome(of: cancelled, "cancel()") {
                await expectInvalidUse("restart() after \(outcome.name)") { try await cancelled.restart() }
                await expectInvalidUse("complete() after \(outcome.name)") { try await cancelled.complete() }
            }
        }
        // ended by a failure
        if let request = entryRequest {
            try await emulator.inject(ConformanceFault(request: request, action: .drop, count: capabilities.attemptsPerRequest))
            let failed = try provider.enqueue(entry(.open, user: "failed"))
            if let outcome = await awaitOutcome(of: failed, "drop on entry") {
                if failed.state.isFinal {
                    await expectInvalidUse("restart() after \(outcome.name)") { try await failed.restart() }
                    await expectInvalidUse("complete() after \(outcome.name)") { try await failed.complete() }
                } else {
                    recorder.fail("a drop on every entry attempt ended \(describe(outcome)), which is not final")
                }
            }
            try await emulator.clearFaults()
        }
        // completed
        let passed = try provider.enqueue(entry(.open, user: "completed"))
        if let outcome = await awaitOutcome(of: passed, "open room"), outcome.pass != nil || outcome.state == .disabled {
            if let first = try await bounded("complete()", { try await passed.complete() }) {
                await expectInvalidUse("restart() after completed") { try await passed.restart() }
                let again = try await bounded("complete() after completed") { try await passed.complete() }
                recorder.expect(
                    again == first,
                    "complete() after completed returned \(again.map { "\($0)" } ?? "nothing"), expected the first status \(first)")
            }
        }
        try await expectNoKeyLeft("finished sessions")
    }

    func duplicateJoin() async throws {
        let provider = try makeProvider(.join)
        let first = try provider.enqueue(entry(.queue, user: "twice"))
        guard await waitInLine(first, "duplicate join") else { return }
        let entries = try await counters().entries
        let second = try provider.enqueue(entry(.queue, user: "twice"))
        recorder.expect(first === second, "join: a second enqueue of an entry in flight made a new session")
        let entriesAfter = try await counters().entries
        recorder.expect(entriesAfter == entries, "join: a second enqueue sent another entry request (\(entries) → \(entriesAfter))")
        first.cancel()
        _ = await awaitOutcome(of: first, "join: cancel()")
        let third = try provider.enqueue(entry(.queue, user: "twice"))
        recorder.expect(third !== first, "join: an enqueue after the first session ended joined the ended session")
        try await cleanUp([first, second, third], "duplicate join")
    }

    func duplicateReject() async throws {
        let provider = try makeProvider(.reject)
        let first = try provider.enqueue(entry(.queue, user: "twice"))
        guard await waitInLine(first, "duplicate reject") else { return }
        do {
            let second = try provider.enqueue(entry(.queue, user: "twice"))
            recorder.fail("reject: a second enqueue of an entry in flight was not refused")
            if second !== first { second.cancel() }
        } catch let error as WaitingRoomError {
            recorder.expect(error.kind == .invalidUse, "reject: refused with \(error.kind.rawValue), expected invalidUse")
            recorder.expect(error.vendor == vendorID, "reject: the refusal's vendor is \(error.vendor ?? "nil"), expected \(vendorID)")
        }
        recorder.expect(first.state == .waiting, "reject: the session in flight is \(first.state.rawValue) after a refused duplicate")
        first.cancel()
        _ = await awaitOutcome(of: first, "reject: cancel()")
        let third = try provider.enqueue(entry(.queue, user: "twice"))
        recorder.expect(third !== first, "reject: an enqueue after the first session ended returned the ended session")
        try await cleanUp([first, third], "duplicate reject")
    }

    // MARK: streams and handlers

    func lateSubscriber() async throws {
        let provider = try makeProvider()
        // while waiting
        let waiting = try provider.enqueue(entry(.queue))
        let waitingLog = EventCollector(waiting.events)
        if await waitInLine(waiting, "late subscriber") {
            await waitUntil("the first stream to see the wait") {
                waitingLog.events.contains { if case .stateChanged(.waiting, _) = $0 { return true } else { return false } }
            }
            let late = EventCollector(waiting.events)
            await waitUntil("a late stream's first event") { !late.events.isEmpty }
            if let first = late.events.first {
                recorder.expect(
                    { if case .stateChanged(.waiting, _) = first { return true } else { return false } }(),
                    "a late subscriber while waiting first got \(first), expected stateChanged(waiting)")
            }
        }
        // after a pass
        let passed = try provider.enqueue(entry(.open, user: "late-pass"))
        _ = EventCollector(passed.events)
        if let outcome = await awaitOutcome(of: passed, "open room") {
            let late = EventCollector(passed.events)
            await waitUntil("a late stream to replay the outcome") { late.events.contains(outcome.event) }
            if let first = late.events.first {
                let startsWithState: Bool
                if case .stateChanged(let state, _) = first { startsWithState = state == outcome.state } else { startsWithState = false }
                recorder.expect(
                    startsWithState,
                    "a late subscriber after \(outcome.name) first got \(first), expected stateChanged(\(outcome.state.rawValue))")
            }
            if outcome.pass != nil || outcome.state == .disabled {
                _ = try await bounded("complete()") { try await passed.complete() }
                let afterCompletion = EventCollector(passed.events)
                await waitUntil("a late stream after complete() to end") { afterCompletion.finished }
                let events = afterCompletion.events
                recorder.expect(
                    events.first.map { if case .stateChanged(.completed, _) = $0 { return true } else { return false } } == true,
                    "a late subscriber after complete() first got \(events.first.map { "\($0)" } ?? "nothing"), expected stateChanged(completed)"
                )
                recorder.expect(events.contains(outcome.event), "a late subscriber after complete() did not get the outcome replayed")
                recorder.expect(
                    events.contains { $0.name == .completed }, "a late subscriber after complete() did not get completed replayed")
            }
        }
        // after a final outcome
        let blocked = try provider.enqueue(entry(.block, user: "late-block"))
        _ = EventCollector(blocked.events)
        if let outcome = await awaitOutcome(of: blocked, "block room") {
            let late = EventCollector(blocked.events)
            await waitUntil("a late stream after \(outcome.name) to end") { late.finished }
            recorder.expect(
                late.events.first.map { if case .stateChanged(let s, _) = $0 { return s == outcome.state } else { return false } } == true,
                "a late subscriber after \(outcome.name) first got \(late.events.first.map { "\($0)" } ?? "nothing")")
            recorder.expect(late.events.contains(outcome.event), "a late subscriber after \(outcome.name) did not get the outcome replayed")
        }
        try await cleanUp([waiting, passed, blocked], "late subscriber")
    }

    func streamsEnd() async throws {
        let provider = try makeProvider()
        for room in [ConformanceRoom.open, .block, .closed] {
            let session = try provider.enqueue(entry(room, user: "stream-\(room.rawValue)"))
            let log = EventCollector(session.events)
            let second = EventCollector(session.events)
            guard let outcome = await awaitOutcome(of: session, "\(room.rawValue) room") else { continue }
            await waitUntil("\(room.rawValue) room: the outcome event") { log.events.contains(outcome.event) }
            if outcome.pass?.requiresCompletion == true {
                recorder.expect(!log.finished, "\(room.rawValue) room: the stream ended before the key was returned")
                _ = try await bounded("complete()") { try await session.complete() }
            }
            for (name, stream) in [("first", log), ("second", second)] {
                await waitUntil("\(room.rawValue) room: the \(name) stream to end after \(outcome.name)") { stream.finished }
                let last = stream.events.last
                if outcome.pass?.requiresCompletion == true {
                    recorder.expect(
                        last?.name == .completed || last?.name == .keyReturnedLate,
                        "\(room.rawValue) room: the \(name) stream ended with \(last.map { "\($0)" } ?? "nothing"), expected completed")
                } else {
                    recorder.expect(
                        last == outcome.event,
                        "\(room.rawValue) room: the \(name) stream ended with \(last.map { "\($0)" } ?? "nothing"), expected \(outcome.name)"
                    )
                }
                let outcomeNames: Set<EventName> = [.passed, .disabled, .blocked, .closed, .failed]
                let outcomes = stream.events.filter { outcomeNames.contains($0.name) }.count
                recorder.expect(outcomes == 1, "\(room.rawValue) room: the \(name) stream carried \(outcomes) outcome events")
            }
            try await cleanUp([session], "\(room.rawValue) room")
        }
        // ended by cancel()
        let waiting = try provider.enqueue(entry(.queue, user: "stream-cancel"))
        let log = EventCollector(waiting.events)
        if await waitInLine(waiting, "stream of a cancelled session") {
            waiting.cancel()
            await waitUntil("the stream to end after cancel()") { log.finished }
            recorder.expect(
                log.events.last?.name == .closed, "after cancel() the stream ended with \(log.events.last.map { "\($0)" } ?? "nothing")")
        }
        try await cleanUp([waiting], "stream of a cancelled session")
    }

    func boundHandlers() async throws {
        let provider = try makeProvider()
        let session = try provider.enqueue(entry(.queue))
        let log = EventCollector(session.events)
        guard await waitInLine(session, "bound handlers") else { return }
        let seen = HandlerLog()
        session.bind(nil) { seen.append($0) }
        let passedOnly = HandlerLog()
        session.bind(.passed) { passedOnly.append($0) }
        let outcome = try await admitUntilOutcome(session, others: [], room: emulator.room(.queue), "bound handlers")
        guard let outcome else { return }
        await waitUntil("the handler to see \(outcome.name)") { seen.events.contains(outcome.event) }
        await waitUntil("the stream to see \(outcome.name)") { log.events.contains(outcome.event) }
        let early = seen.events.filter {
            if case .stateChanged(let state, _) = $0 { return state == .idle || state == .connecting } else { return false }
        }
        recorder.expect(early.isEmpty, "a handler bound while waiting saw events from before it was bound: \(early)")
        let all = log.events
        let handled = seen.events
        recorder.expect(
            handled.count <= all.count && Array(all.suffix(handled.count)) == handled,
            "a handler bound while waiting saw \(handled.map(\.name.rawValue)), not the stream's latest events \(all.suffix(handled.count).map(\.name.rawValue))"
        )
        recorder.expect(
            passedOnly.events.allSatisfy { $0.name == .passed }, "a handler bound to passed saw \(passedOnly.events.map(\.name.rawValue))")
        // bound after the outcome: nothing until complete()
        let late = HandlerLog()
        session.bind(nil) { late.append($0) }
        let completedOnly = HandlerLog()
        session.bind(.completed) { completedOnly.append($0) }
        recorder.expect(late.events.isEmpty, "a handler bound after \(outcome.name) saw \(late.events.map(\.name.rawValue)) at once")
        if outcome.pass != nil || outcome.state == .disabled {
            _ = try await bounded("complete()") { try await session.complete() }
            await waitUntil("the late handler to see completed") { late.events.contains { $0.name == .completed } }
            recorder.expect(!late.events.contains(outcome.event), "a handler bound after \(outcome.name) saw it replayed")
            recorder.expect(
                late.events.first.map { if case .stateChanged(.completed, _) = $0 { return true } else { return false } } == true,
                "a handler bound after \(outcome.name) first saw \(late.events.first.map { "\($0)" } ?? "nothing"), expected stateChanged(completed)"
            )
            recorder.expect(
                completedOnly.events.count == 1 && completedOnly.events.allSatisfy { $0.name == .completed },
                "a handler bound to completed saw \(completedOnly.events.map(\.name.rawValue))")
        }
        try await cleanUp([session], "bound handlers")
    }

    // MARK: pass store

    func passStoreCheck() async throws {
        let session = try makeProvider().enqueue(entry(.open))
        guard let outcome = await awaitOutcome(of: session, "open room"), let pass = outcome.pass else {
            recorder.fail("passStore needs a pass in the open room, got \(describe(session.currentOutcome))")
            return
        }
        switch capabilities.passStorage {
        case .storedUntilExpiry:
            let stored = try await passStore.pass(vendor: vendorID, room: pass.room)
            recorder.expect(
                stored?.credential == pass.credential,
                "the pass was not saved in the PassStore (found \(stored.map { "\($0.credential.prefix(12))…" } ?? "nothing"))")
            if let expiry = pass.expiresAt {
                let wait = max(0, expiry.timeIntervalSince(clock.now())) + 1
                clock.advance(by: .milliseconds(Int64(wait * 1000)))
                let expired = try await passStore.pass(vendor: vendorID, room: pass.room)
                recorder.expect(expired == nil, "the PassStore still returns the pass after its expiry")
                let listed = try await passStore.all().contains { $0.credential == pass.credential }
                recorder.expect(!listed, "the PassStore still lists the pass after its expiry")
            } else {
                recorder.fail("a stored pass without expiresAt never expires from the PassStore")
            }
        case .notStored:
            let all = try await passStore.all()
            recorder.expect(all.isEmpty, "the vendor declares passes not stored, but the PassStore holds \(all.count)")
        }
        try await cleanUp([session], "pass store")
    }
}
