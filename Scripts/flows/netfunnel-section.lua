-- NetFUNNEL section control: a user enters a section (a limited number inside at once), stays
-- while the agent keeps the slot alive, and leaves with session:complete() (nfStopSection).
-- Shows: control = "section", staying inside across waits, leaving explicitly, and a decision:
-- give up (wr.abort) when the line is too long.
-- Run: waitingroom run Scripts/flows/netfunnel-section.lua --emulator
--      (project "service_1", segment "segKey_section": two users inside at once)
local MAX_AHEAD = 500

return {
  vendor = "netfunnel",
  config = { clientId = "emulator-0000", networkTimeout = 3000, retryCount = 0 },
  entry = { scope = "service_1", room = "segKey_section", control = "section", user_id = "viewer-7" },

  on_progress = function(event)
    if event.ahead and event.ahead > MAX_AHEAD then
      return wr.abort("line too long (" .. event.ahead .. " ahead)")
    end
    wr.emit("progress", { ahead = event.ahead })
  end,

  on_success = function(event, session)
    wr.emit("enter_section", { room = event.pass.room })
    -- inside the section: the vendor keeps the slot alive while we work
    for page = 1, 3 do
      wr.sleep(2)
      wr.emit("browse", { page = page })
    end
    assert(session:complete())   -- leave the section, freeing the slot
  end,

  on_complete = function() wr.emit("left_section") end,
  on_error = function(event) return wr.abort(event.error.message) end,
}
