-- Hybrid (Queue-it KnownUser) protected-API call: the app calls an API that the waiting room
-- protects. Without a valid queueittoken the API answers with an `x-queueit-redirect` header;
-- the flow waits in the room and repeats the call with the token it got.
-- Shows: wr.http (the flow's only network), wr.config (the resolved vendor config), retrying the
-- entry when the API still refuses, and handing the API's answer to the app with wr.emit.
-- Run: waitingroom run Scripts/flows/hybrid-api.lua --emulator
--      (customer "demo", room "sale"; the emulator serves the protected demo API)
local function api_url(token)
  local base = (wr.config and wr.config.waitingRoomDomain) or "http://127.0.0.1:8080"
  -- a bare domain (what --emulator gives, and Queue-it's own "{customer}.queue-it.net"): https,
  -- plain http on loopback only, as the Queue-it client does
  if not base:find("://", 1, true) then
    local loopback = base:match("^127%.") or base:match("^localhost[:/]?") or base:match("^%[::1%]")
    base = (loopback and "http://" or "https://") .. base
  end
  local url = base .. "/queueit/api/demo/sale/orders"
  if token then url = url .. "?queueittoken=" .. token end
  return url
end

local function call_api(token)
  return wr.http {
    url = api_url(token),
    headers = { ["x-queueit-ajaxpageurl"] = "https%3A%2F%2Fshop.example%2Forders" },
    timeout = 5,
  }
end

return {
  vendor = "queueit",
  -- queuePage "follow": the emulator's queue page is followed over HTTP (real pages need a host)
  config = { customerId = "demo", waitingRoomDomain = "http://127.0.0.1:8080", pollIntervalSeconds = 1, queuePage = "follow" },
  entry = { scope = "demo", room = "sale" },
  max_retries = 1,

  on_success = function(event)
    local response, err = call_api(event.pass.credential)
    if not response then
      return wr.abort("protected API unreachable: " .. tostring(err))
    end
    if response.headers["x-queueit-redirect"] then
      -- the token was not accepted (expired, other room): wait again
      wr.log("warning", "API redirected to the queue again")
      return wr.retry { after = 1 }
    end
    wr.emit("api_result", { status = response.status, body = response.body })
  end,

  on_progress = function(event) wr.emit("progress", { ahead = event.ahead }) end,
  on_error = function(event) return wr.abort(event.error.message) end,
}
