-- The demo flow (`waitingroom demo`): wait in line with a live progress line, do a short
-- "checkout", give the slot back, and say what happened. Vendor-neutral: `waitingroom demo` runs
-- it once against a NetFUNNEL segment and once against a Queue-it room, handing it the vendor,
-- the room and the emulator's address.
-- Shows: the flow contract in a few lines (entry, handlers, wr.emit, session:complete).
-- Run: waitingroom demo        (or: waitingroom run Scripts/flows/demo.lua --emulator)
return {
  vendor = "netfunnel",                                 -- the host may give another one
  entry = { scope = "service_1", room = "segKey_basic", user_id = "demo-user" },

  on_queue_opened = function(event)
    wr.emit("message", { text = "In line (queue page: " .. event.queue_url .. ")" })
  end,

  on_success = function(event, session)
    wr.emit("message", { text = "Your turn! Checking out..." })
    wr.sleep(0.5)                                       -- the business step
    local status = session:complete()                  -- returns the key (NetFUNNEL); no-op for tokens
    wr.emit("message", { text = "Done (" .. event.vendor .. " " .. tostring(status and status.code or event.code) .. ")." })
  end,

  on_disabled = function(event) wr.emit("message", { text = "The room is off: go ahead." }) end,
  on_block = function(event) wr.emit("message", { text = "Blocked: " .. event.message }) end,
  on_error = function(event) wr.emit("message", { text = "Error: " .. event.error.message }) end,
}
