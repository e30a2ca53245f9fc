-- Fail-open after bounded retries: when the waiting-room service cannot be reached, retry a few
-- times with growing pauses, then let the user through rather than lose the sale.
-- Shows: on_error with wr.retry{after=…} (bounded by max_retries), wr.bypass(reason), counting
-- attempts in flow state, and keeping blocks fail-closed.
-- Run: waitingroom run Scripts/flows/fail-open.lua --emulator
--      (with the emulator's network fault injected, e.g. `waitingroom emulate` + a fault, the run
--       ends "bypassed" after 3 tries; with a healthy emulator it passes normally)
local failures = 0
local NETWORK = { networkOffline = true, networkTimeout = true, server = true, unavailable = true }

return {
  vendor = "netfunnel",
  config = { clientId = "emulator-0000", networkTimeout = 1000, retryCount = 0, errorBypass = false },
  entry = { scope = "service_1", room = "segKey_basic" },
  max_retries = 2,

  on_error = function(event)
    if not NETWORK[event.error.kind] then
      return wr.abort("configuration problem: " .. event.error.message)
    end
    failures = failures + 1
    wr.log("warning", "waiting room unreachable (", event.error.kind, "), try ", failures)
    if failures <= 2 then
      return wr.retry { after = failures * 2 }   -- 2 s, then 4 s
    end
    wr.emit("fail_open", { tries = failures, last_error = event.error.kind })
    return wr.bypass("waiting room unreachable after " .. failures .. " tries")
  end,

  on_success = function(event, session)
    wr.emit("navigate", { to = "/shop" })
    session:complete()
  end,

  on_block = function(event)
    -- a real block is not an outage: stay closed
    return wr.abort("blocked: " .. event.message)
  end,
}
