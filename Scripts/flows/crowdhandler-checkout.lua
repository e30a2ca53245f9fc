-- CrowdHandler: check the checkout URL, wait in the room's line while not promoted, record the
-- page's performance once through. With trustOnFail false, an API failure sends the user to the
-- safety-net room (or ends with an error) instead of letting them in.
-- Shows: on_queue_opened (the waiting-room URL with ch-id), on_progress (position, ETA),
-- on_success with the session token and responseID, on_disabled (no room guards the URL),
-- on_block (4xx), on_error.
-- Run: waitingroom run Scripts/flows/crowdhandler-checkout.lua --emulator
--      (the emulator's room "demo-queue" lets 30 users a minute through; "demo-open" everyone)
return {
  vendor = "crowdhandler",
  config = {
    -- publicKey, apiURL, waitURL and siteURL come from --emulator; against the real service set
    -- publicKey (and siteURL to your site).
    trustOnFail = true,
    pollInterval = 1000,
  },
  -- the room is the protected URL, or a path under the scope (when it is a site URL) or siteURL;
  -- a scope that is not a URL is only a label
  entry = { scope = "site", room = "demo-open", user_id = "shopper-7" },

  on_queue_opened = function(event)
    wr.emit("show_waiting_room", { url = event.queue_url })
  end,

  on_progress = function(event)
    wr.emit("progress", { ahead = event.ahead, eta = event.eta })
  end,

  on_success = function(event)
    local pass = event.pass
    wr.emit("navigate", { to = pass.target_url, token = pass.credential })
    -- the host records the page's performance (PUT /v1/responses/{responseID}) after serving it,
    -- e.g. CrowdHandlerProvider.release(pass) or CrowdHandlerGatekeeper.recordPerformance()
  end,

  on_disabled = function() wr.emit("navigate", { to = "/checkout" }) end,
  on_block = function(event) wr.emit("show_message", { text = "Access refused (" .. event.code .. ")" }) end,
  on_error = function(event)
    wr.emit("show_message", { text = "The waiting room is unavailable: " .. event.error.message })
  end,
}
