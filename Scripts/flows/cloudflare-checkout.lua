-- Cloudflare Waiting Room (JSON mode): request the checkout URL with Accept: application/json and
-- the __cfwaitingroom cookie, wait while the answer is a cfWaitingRoom reply (refreshing every
-- refreshIntervalSeconds), and carry on with the origin's own response once through.
-- Shows: on_queue_opened (the protected URL), on_progress (estimated wait, no position: Cloudflare
-- gives none; code 8 while an event pre-queues, eta then counting down to its start), on_success
-- with the cookie to send next and the origin's status, on_disabled (the room is suspended),
-- on_block (code 4 reject method, 5 queue full, else a 4xx), on_error (no usable answer).
-- Run: waitingroom run Scripts/flows/cloudflare-checkout.lua --emulator
--      (the emulator's room "demo-queue" lets 30 new users a minute through; "demo-open" everyone)
return {
  vendor = "cloudflare",
  config = {
    -- siteURL comes from --emulator; against a real site set it to the protected site
    -- (the room must have json_response_enabled).
    retries = 3,
    minRefreshInterval = 500,
  },
  -- the room is the protected URL, or a path under the scope (when it is a site URL) or siteURL
  entry = { scope = "site", room = "demo-open", user_id = "shopper-7" },

  on_queue_opened = function(event)
    wr.emit("waiting", { url = event.queue_url })
  end,

  on_progress = function(event)
    if event.code == 8 then
      -- an event is pre-queueing: nobody is let in before it starts; eta counts down to the start
      wr.emit("countdown", { starts_in = event.eta, text = event.eta_text })
    else
      wr.emit("progress", { eta = event.eta, eta_text = event.eta_text, queue_full = event.code == 5 })
    end
  end,

  on_success = function(event)
    local pass = event.pass
    -- the cookie goes with every later request to the protected site
    wr.emit("navigate", { to = pass.target_url, cookie = pass.credential })
  end,

  on_disabled = function() wr.emit("navigate", { to = "/checkout" }) end,
  on_block = function(event)
    if event.code == 4 then
      wr.emit("show_message", { text = "The sale is closed." })            -- the room rejects everyone
    elseif event.code == 5 then
      wr.emit("show_message", { text = "The queue is full; try again later." })
    else
      wr.emit("show_message", { text = "Not admitted (" .. event.code .. "): " .. event.message })
    end
  end,
  on_error = function(event)
    wr.emit("show_message", { text = "The waiting room is unavailable: " .. event.error.message })
  end,
}
