import Foundation

extension CloudflareEmulatorModel {
    /// One counted request of a visitor (the holder of the `__cfwaitingroom` cookie `id`) to room
    /// `name`, once the room is known to take it: the decision between the origin and the waiting
    /// answer, and the bookkeeping of each. The room's state is written back to the model's
    /// state with every answer.
    struct Visit {
        let request: CloudflareEmulatorRequest
        let now: Date
        /// The room's name and the visitor's cookie value.
        let name: String, id: String
        let effective: Effective
        var roomState: RoomState

        var json: Bool { request.accept == "application/json" }

        /// The `Set-Cookie` field that (re)issues the visitor's cookie for `maxAge` seconds.
        func cookie(maxAge: Int) -> (String, String) {
            let room = roomState.room
            return (
                "Set-Cookie",
                room.cookieAttributes.setCookie(name: room.cookieName, value: id, maxAge: maxAge, embedded: request.isEmbedded)
            )
        }

        /// Answers the visit: through to the origin for an active session or an admitted arrival,
        /// else the waiting answer (a new arrival joins the line or the pre-queue).
        mutating func answer(_ s: inout State) -> CloudflareEmulatorAnswer {
            if roomState.active[id] != nil { return admitted(&s) }
            // failed Turnstile with infinite_queue: a waiting page that never lets the client in
            if s.visitors[id]?.infiniteQueue == true { return queued(&s, kind: "infiniteQueue") }
            if roomState.inLine.contains(id) || roomState.preQueue.isHeld(id) { return queued(&s) }
            // a new arrival (or one whose session ran out): queue_all and a pre-queue hold users
            // whatever the queueing method
            if effective.prequeueing {
                if roomState.preQueue.hold(id, now: now) {
                    roomState.log.arrived(id, at: now, prequeued: true)
                    return queued(&s)
                }
                // an event whose pre-queue is not the room's current one: nobody is let in, so the line
                joinLine(&s)
                return queued(&s)
            }
            if effective.room.queueAll {
                joinLine(&s)
                return queued(&s)
            }
            if effective.room.queueingMethod == .reject { return queued(&s) }
            if effective.room.queueingMethod == .passthrough {
                roomState.log.arrived(id, at: now, prequeued: false)
                CloudflareEmulatorModel.accept(id, &roomState, effective.room, at: now)
                s.counters.admitted += 1
                return admitted(&s)
            }
            let rate = effective.room.newUsersPerMinute
            if rate > 0, (roomState.line.count + 1 + rate - 1) / rate > CloudflareEmulatorModel.fullAfterMinutes {
                return queued(&s, full: true)
            }
            if roomState.line.isEmpty, roomState.credit >= 1, roomState.active.count < effective.room.totalActiveUsers {
                roomState.log.arrived(id, at: now, prequeued: false)
                roomState.credit -= 1
                CloudflareEmulatorModel.accept(id, &roomState, effective.room, at: now)
                s.counters.admitted += 1
                return admitted(&s)
            }
            joinLine(&s)
            return queued(&s)
        }

        /// Through to the origin: the session renewed (unless renewal is disabled), or revoked
        /// when the origin says so (`?revoke=1` with the `revoke` command enabled).
        mutating func admitted(_ s: inout State) -> CloudflareEmulatorAnswer {
            let sessionSeconds = effective.room.sessionDuration * 60
            s.visitors[id]?.lastUpdated = nil
            s.visitors[id]?.lastReply = nil
            if request.query["revoke"] == "1", roomState.room.enabledOriginCommands.contains("revoke") {
                roomState.active[id] = nil
                roomState.acceptedAt[id] = nil
                s.rooms[name] = roomState
                s.counters.revoked += 1
                return CloudflareEmulatorModel.origin(
                    path: request.path, room: name, visitor: id, json: json,
                    headers: [cookie(maxAge: 300), ("Cf-Waiting-Room-Command", "revoke")], kind: "origin")
            }
            if !effective.room.disableSessionRenewal { roomState.active[id] = now.addingTimeInterval(TimeInterval(sessionSeconds)) }
            s.rooms[name] = roomState
            let left = Int(max(0, (roomState.active[id] ?? now).timeIntervalSince(now)).rounded(.up))
            return CloudflareEmulatorModel.origin(
                path: request.path, room: name, visitor: id, json: json, headers: [cookie(maxAge: left)], kind: "origin")
        }

        /// The waiting answer (`rejected`, `queueIsFull` or `queued` unless `kind` names it).
        mutating func queued(_ s: inout State, full: Bool = false, kind: String? = nil) -> CloudflareEmulatorAnswer {
            s.rooms[name] = roomState
            // reject turns users away unless queue_all or a pre-queue holds them (they wait then)
            let rejecting = effective.room.queueingMethod == .reject && !effective.room.queueAll && !effective.prequeueing
            let reply = CloudflareEmulatorModel.reply(
                for: id, roomState, effective, visitors: s.visitors, at: now, rejected: rejecting, full: full)
            s.visitors[id]?.lastUpdated = now
            s.visitors[id]?.lastReply = reply
            let kind = kind ?? (rejecting ? "rejected" : full ? "queueIsFull" : "queued")
            return CloudflareEmulatorModel.queuedAnswer(
                room: name, roomState.room, reply: reply, json: json, headers: [cookie(maxAge: 300)], kind: kind)
        }

        /// Puts the visitor at the end of the line.
        mutating func joinLine(_ s: inout State) {
            roomState.log.arrived(id, at: now, prequeued: false)
            roomState.line.append(id)
            roomState.inLine.insert(id)
            s.visitors[id]?.queuedAt = now
        }
    }
}
