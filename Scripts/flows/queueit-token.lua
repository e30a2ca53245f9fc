-- Queue-it with an enqueue token: an invite-only room ("members") lets in only visitors who
-- bring an enqueue token (issued by your own backend). The flow waits through the queue and
-- hands the queueittoken to the app.
-- Shows: entry.token, on_queue_opened (queue page URL), on_progress, on_success with the token,
-- on_disabled / on_block handling.
-- Run: waitingroom run Scripts/flows/queueit-token.lua --emulator
--      (customer "demo", room "members": token required)
return {
  vendor = "queueit",
  config = {
    customerId = "demo",
    waitingRoomDomain = "http://127.0.0.1:8080",   -- --emulator replaces it with the emulator's URL
    language = "en-US",
    pollIntervalSeconds = 1,
    queuePage = "follow",   -- the emulator's queue page is followed over HTTP (real pages need a host)
  },
  -- A QueueToken.V1 enqueue token (header.payload.signature) signed with the demo customer's
  -- secret key, for room "members", no expiry; mint your own with QueueItEnqueueTokenMinter
  -- (Swift) or the emulator's POST /_emulator/queueit/enqueuetokens.
  entry = {
    scope = "demo", room = "members", user_id = "member-42",
    token = "eyJ0eXAiOiJRVDEiLCJlbmMiOiJBRVMyNTYiLCJpc3MiOjE3NjcyMjU2MDAwMDAsInRpIjoiaW52aXRlLTJmOWMxZSIsImMiOiJkZW1vIiwiZSI6Im1lbWJlcnMifQ..VK-XVP-q15dXA-WrCnHN9m8gYYajg8XXNjKQu3XnKgA",
  },

  on_queue_opened = function(event)
    wr.emit("show_queue_page", { url = event.queue_url })
  end,

  on_progress = function(event)
    wr.emit("progress", { ahead = event.ahead, eta = event.eta_text or event.eta })
  end,

  on_success = function(event)
    -- the app appends the token to its target URL; the origin validates it (KnownUser)
    wr.emit("navigate", { to = event.pass.target_url or "/sale", queueittoken = event.pass.credential })
  end,

  on_disabled = function() wr.emit("navigate", { to = "/sale" }) end,
  on_block = function(event) wr.emit("show_message", { text = event.message }) end,
  on_error = function(event)
    if event.error.kind == "rejected" then
      wr.emit("show_message", { text = "This sale is for invited members only." })
      return wr.abort("no valid invite")
    end
  end,
}
