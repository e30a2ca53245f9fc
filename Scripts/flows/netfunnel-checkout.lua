-- NetFUNNEL basic control: a checkout that waits its turn, shows progress, does the business
-- step (payment) while holding the key, then returns the key with session:complete().
-- Shows: on_progress / on_success / on_complete, wr.emit actions for the app, completing after
-- the business step, and fail-closed on errors.
-- Run: waitingroom run Scripts/flows/netfunnel-checkout.lua --emulator
--      (the emulator's project "service_1", segment "segKey_basic": one user at a time)
return {
  vendor = "netfunnel",
  -- NetFUNNEL agent option names; --emulator points serverUrl at the local emulator
  config = {
    clientId = "emulator-0000",
    networkTimeout = 3000,   -- ms per request
    retryCount = 1,          -- extra attempts after a network error
    errorBypass = false,     -- fail closed: an error is an error
  },
  entry = { scope = "service_1", room = "segKey_basic", control = "basic", user_id = "buyer-1" },

  on_progress = function(event)
    wr.emit("progress", { ahead = event.ahead, behind = event.behind, eta = event.eta })
  end,

  on_success = function(event, session)
    wr.emit("navigate", { to = "/checkout" })
    -- the business step: pay while holding the key (other users wait meanwhile)
    wr.log("info", "paying...")
    wr.sleep(1)
    wr.emit("paid", { order = "A-1001" })
    -- give the slot back as soon as the step is done
    local status, err = session:complete()
    if not status then wr.log("error", "key return failed: ", err) end
  end,

  on_complete = function(event)
    wr.emit("done", { code = event.code, message = event.message })
  end,

  on_block = function(event)
    wr.emit("show_message", { text = "Access is blocked for now (" .. event.code .. ")" })
  end,

  on_error = function(event)
    wr.emit("show_message", { text = "Try again later: " .. event.error.message })
  end,
}
