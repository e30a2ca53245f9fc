-- The demo flow (`waitingroom demo`): wait in a NetFUNNEL room on the local emulator with a live
-- progress line, do a short "checkout", return the key, and say what happened.
-- Shows: the whole flow contract in a few lines.
-- Run: waitingroom demo        (or: waitingroom run Scripts/flows/demo.lua --emulator)
return {
  vendor = "netfunnel",
  config = { clientId = "emulator-0000", networkTimeout = 3000 },
  entry = { scope = "service_1", room = "segKey_basic", user_id = "demo-user" },

  on_progress = function(event)
    -- the CLI draws its own live progress line from the events; flows can add their own actions
    wr.emit("progress", { ahead = event.ahead, behind = event.behind, eta = event.eta, percent = event.percent })
  end,

  on_success = function(event, session)
    wr.emit("message", { text = "Your turn! Checking out..." })
    wr.sleep(1)
    local status = session:complete()
    wr.emit("message", { text = status and "Done: the slot was returned." or "Done." })
  end,

  on_block = function(event) wr.emit("message", { text = "Blocked: " .. event.message }) end,
  on_error = function(event) wr.emit("message", { text = "Error: " .. event.error.message }) end,
}
