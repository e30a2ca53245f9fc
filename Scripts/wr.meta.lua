---@meta wr
-- Editor stubs for the `wr` module of WaitingRoom flow scripts (LuaLS / lua-language-server).
-- Nothing here runs: the host (Sources/WaitingRoomLua) provides `wr`. Add this folder to
-- `workspace.library` in .luarc.json to get completion and type checks.
--
-- The sandbox: flows get base (no dofile/loadfile), table, string (no dump; pattern functions
-- bounded), math, utf8, coroutine; `load` is text only; `collectgarbage` only "count"; `print`
-- and `warn` go to the host logger. Each flow has its own globals. Limits (defaults):
-- 16 MiB of Lua heap per runtime, 10 million instructions and 1 s of running time per handler
-- (time spent waiting in `wr.*` calls is free). A violation ends the handler with an error the
-- host reports; `pcall` cannot catch it. While a handler waits in a `wr.*` call, other handlers
-- of the same flow may run: do not assume globals are unchanged across a wait.

---@class wr
wr = {}

---Module version.
---@type string
wr.version = "1.0"

---The vendor id the flow runs (set when the run starts; host-given values included).
---@type string?
wr.vendor = nil
---The vendor configuration the flow runs with (host-given values included).
---@type table?
wr.config = nil
---The entry the flow runs.
---@type wr.Entry?
wr.entry = nil

-- ---------------------------------------------------------------------------------------------
-- Flow contract
-- ---------------------------------------------------------------------------------------------

---What a flow file returns. `entry`, `vendor` and `config` may instead be given by the host
---(`waitingroom run --vendor/--config`, `FlowOptions`); the host's value wins.
---@class wr.Flow
---@field vendor? string Vendor id: "netfunnel", "queueit", "crowdhandler", "cloudflare" (and "scripted" in tests).
---@field entry? wr.Entry What to wait for.
---@field config? table Vendor options, e.g. NetFUNNEL { clientId=, serverUrl=, errorUrl=, settingUrl=, networkTimeout=, retryCount=, errorBypass=, useNetfunnelTemplate=, useNetworkRecoveryMode= }, Queue-it { customerId=, waitingRoomDomain=, queuePage= ("auto" default, "follow", "browser", "host"), hostReportTimeoutSeconds=, ... }, CrowdHandler { publicKey=, apiURL=, waitURL=, siteURL=, timeout=, trustOnFail=, safetyNetSlug=, pollInterval=, ... }, Cloudflare { siteURL=, timeout=, retries=, retryDelay=, minRefreshInterval=, maxRefreshInterval=, pollInterval=, sessionDuration=, blockWhenQueueIsFull=, failOpen=, ... }.
---@field max_retries? integer How many `wr.retry` answers are honoured (default 3).
---@field auto_complete? boolean Return a held key after on_success if the flow did not (default true).
---@field on_progress? fun(event: wr.Event, session: wr.Session): wr.Decision? Position update while waiting.
---@field on_queue_opened? fun(event: wr.Event, session: wr.Session): wr.Decision? The vendor opened a queue page (event.queue_url).
---@field on_success? fun(event: wr.Event, session: wr.Session): wr.Decision? Passed: event.pass holds the key or token. Call session:complete() after the business step.
---@field on_disabled? fun(event: wr.Event, session: wr.Session): wr.Decision? The room is off: go on without waiting.
---@field on_block? fun(event: wr.Event, session: wr.Session): wr.Decision? Access blocked by the vendor.
---@field on_error? fun(event: wr.Event, session?: wr.Session): wr.Decision? Network or server error (event.error). Return wr.retry / wr.bypass / wr.abort.
---@field on_close? fun(event: wr.Event, session: wr.Session): wr.Decision? The user (or the host) left the line.
---@field on_restart? fun(event: wr.Event, session: wr.Session): wr.Decision? The vendor restarted the wait.
---@field on_complete? fun(event: wr.Event, session: wr.Session) The key was returned.
---@field on_key_returned_late? fun(event: wr.Event, session: wr.Session) A key whose return had failed (on_complete with code 500, or on_close/on_error) was returned later, in the background. A flow that has already ended does not see it; a `wr.on("key_returned_late", fn)` listener on a session that is still read does.
---@field on_connection? fun(event: wr.Event, session: wr.Session): wr.Decision? The connection to the vendor changed: event.connection is "connected", "reconnecting" (event.attempt, event.retry_in seconds) or "offline".
---@field on_queue_page_changed? fun(event: wr.Event, session: wr.Session): wr.Decision? The vendor's queue page moved to event.queue_url (Queue-it's queue-URL-changed signal).
---@field on_user_exited? fun(event: wr.Event, session: wr.Session): wr.Decision? The user left the vendor's queue page (Queue-it's user-exited signal); the wait goes on until it ends.

---What the host wants to enter.
---@class wr.Entry
---@field scope string NetFUNNEL projectKey; Queue-it customerId; CrowdHandler and Cloudflare: a site URL the room is a path of, or a label.
---@field room string NetFUNNEL segmentKey; Queue-it waitingRoomId; CrowdHandler and Cloudflare: the protected URL, or a path under siteURL.
---@field control? "basic"|"section" NetFUNNEL control mode (default "basic").
---@field token? string Queue-it enqueue token; CrowdHandler session token (ch-id) to resume.
---@field key? string Queue-it enqueue key.
---@field user_id? string
---@field attributes? table<string, string> e.g. { layoutName = "...", language = "ko" }

-- ---------------------------------------------------------------------------------------------
-- Events (same field names as the Swift events' `fields`, `waitingroom --json` and logs)
-- ---------------------------------------------------------------------------------------------

---@class wr.Event
---@field event "stateChanged"|"queueOpened"|"progress"|"passed"|"disabled"|"blocked"|"closed"|"sessionRestarted"|"failed"|"completed"|"keyReturnedLate"|"connection"|"queuePageChanged"|"userExited"
---@field vendor string Vendor id.
---@field code integer The vendor's own status code. Cloudflare: progress 202 (waiting), 8 (an event is pre-queueing: eta is the time until it starts), 5 (queue full, waiting on with blockWhenQueueIsFull=false); blocked 4 (the room rejects everyone), 5 (queue full); passed 10 (failOpen let the user through: pass.bypassed_error holds why).
---@field message string The vendor's own message.
---@field state? string stateChanged: idle, connecting, waiting, passed, disabled, blocked, closed, failed, completed.
---@field ahead? integer progress: people in front.
---@field behind? integer progress: people behind.
---@field eta? number progress: seconds to wait (estimate).
---@field eta_text? string progress: the vendor's own ETA text.
---@field percent? number progress: 0-100.
---@field queue_url? string queueOpened, queuePageChanged: the queue page.
---@field connection? "connected"|"reconnecting"|"offline" connection: the state.
---@field attempt? integer connection (reconnecting): the retry's number, from 1.
---@field retry_in? number connection (reconnecting): seconds until the next try.
---@field target_url? string queueOpened: where the user goes after.
---@field pass? wr.Pass passed / disabled.
---@field error? wr.Error failed.
---@field kind? string failed: the error kind (same as error.kind).

---@class wr.Pass
---@field vendor string
---@field scope string
---@field room string
---@field kind "key"|"token"
---@field credential string The key or token (not redacted for flows: do not log it).
---@field requires_completion boolean A NetFUNNEL key that must be returned (session:complete()).
---@field issued_at number Seconds since 1970.
---@field expires_at? number
---@field target_url? string
---@field redirect_type? string
---@field bypassed_error? wr.Error Set when the vendor's errorBypass let the user through.
---@field handle? integer room:try_pass passes that hold a key: what room:release needs (the host gives the key back when the flow ends without it).

---@class wr.Error
---@field kind "networkOffline"|"networkTimeout"|"server"|"unavailable"|"rejected"|"invalidConfiguration"|"invalidResponse"|"invalidUse"
---@field vendor? string
---@field code? integer The vendor's code.
---@field message string
---@field field? string The configuration field at fault.
---@field details? table<string, string> Vendor details, e.g. NetFUNNEL's serverCode and errorUrl (the error page to show).

---An outcome (session:wait()): the fields of its event plus `outcome`.
---@class wr.Outcome: wr.Event
---@field outcome "passed"|"disabled"|"blocked"|"closed"|"failed"

---A vendor status (session:complete()).
---@class wr.Status
---@field vendor string
---@field code integer
---@field message string

---What room:try_pass returns.
---@class wr.TryPass
---@field disposition "passed"|"queue"|"disabled"|"blocked"
---@field vendor string
---@field code integer
---@field message string
---@field pass? wr.Pass
---@field queue_url? string
---@field target_url? string
---@field ahead? integer
---@field behind? integer
---@field eta? number
---@field eta_text? string
---@field percent? number

-- ---------------------------------------------------------------------------------------------
-- Rooms and sessions. Calls that talk to the vendor wait without blocking the host; they may be
-- used inside pcall and inside your own coroutines, not inside metamethods, table.sort
-- comparators or string.gsub callbacks. Failures return nil, message, error-table. When the
-- host's task is cancelled, waiting calls return nil, "cancelled".
-- ---------------------------------------------------------------------------------------------

---@class wr.Room
local Room = {}

---One check, no waiting: would this entry pass now?
---@param entry wr.Entry
---@return wr.TryPass|nil result
---@return string? message
---@return wr.Error? error
function Room:try_pass(entry) end

---Get in line. Events of the session go to `wr.on` listeners.
---@param entry wr.Entry
---@return wr.Session|nil session
---@return string? message
---@return wr.Error? error
function Room:enqueue(entry) end

---Give back the key of a pass from room:try_pass (the answer or its pass). A pass without a key,
---or one already given back, returns code 0 "nothing to return": safe to call twice. A key a
---flow still holds when it ends (returns, errors, is aborted or cancelled) is given back by the
---host (a "key_returned" action; FlowResult.keysReturnedByHost).
---@param answer wr.TryPass|wr.Pass
---@return wr.Status|nil status
---@return string? message
---@return wr.Error? error
function Room:release(answer) end

---The same as room:release (the Swift API's name for giving a key back).
---@param answer wr.TryPass|wr.Pass
---@return wr.Status|nil status
---@return string? message
---@return wr.Error? error
function Room:complete(answer) end

---@class wr.Session
local Session = {}

---Wait for the outcome.
---@return wr.Outcome outcome
function Session:wait() end

---Return what the pass holds (NetFUNNEL key). Call after the business step.
---@return wr.Status|nil status
---@return string? message
---@return wr.Error? error
function Session:complete() end

---Wait again in this session (a held key is returned first).
---@return true|nil ok
---@return string? message
---@return wr.Error? error
function Session:restart() end

---Leave the line (a held key is returned).
---@return true
function Session:cancel() end

---The session state: idle, connecting, waiting, passed, disabled, blocked, closed, failed, completed.
---@return string
function Session:state() end

---Open a vendor's room.
---@param vendor string "netfunnel" | "queueit" | "crowdhandler" | "cloudflare" | ...
---@param config? table Vendor options (see wr.Flow.config).
---@return wr.Room|nil room
---@return string? message
---@return wr.Error? error
function wr.open(vendor, config) end

-- ---------------------------------------------------------------------------------------------
-- Listeners, time, logging, actions
-- ---------------------------------------------------------------------------------------------

---Listen to an event of every session of this flow: "progress", "queue_opened", "success",
---"disabled", "block", "error", "close", "restart", "complete", "key_returned_late", "connection",
---"queue_page_changed" (or "queue_url_changed"), "user_exited", "state" (or "state_changed";
---"session_restarted" for "restart"; or the Swift names
---"passed", "blocked", ...), or "*" for all. Each call runs in its own coroutine.
---@param event string
---@param fn fun(event: wr.Event, session: wr.Session)
---@return integer id for wr.off
function wr.on(event, fn) end

---Stop listening.
---@param id integer
---@return boolean removed
function wr.off(id) end

---Wait `seconds` on the host's clock (virtual in tests) without blocking the host.
---@param seconds number
---@return true|nil ok
---@return string? err "cancelled"
function wr.sleep(seconds) end

---Log through the host logger (label waitingroom.lua, metadata flow=<name>). The level comes
---first and is required (anything else is an error); the rest are joined as the message.
---@param level "trace"|"debug"|"info"|"notice"|"warning"|"error"|"critical"
---@param ... any
function wr.log(level, ...) end

---Hand an action to the Swift host (FlowResult.actions and FlowRuntime.actions), e.g.
---wr.emit("navigate", { to = "/checkout" }). The payload must convert to JSON (see wr.json.encode);
---one that does not raises an error naming the path.
---@param name string
---@param payload? any
function wr.emit(name, payload) end

---@class wr.HttpRequest
---@field url string
---@field method? string Default "GET".
---@field headers? table<string, string>
---@field body? string
---@field timeout? number Seconds, more than 0 (default 10).
---@field follow_redirects? boolean Default false.

---@class wr.HttpResponse
---@field status integer
---@field url string The final URL.
---@field headers table<string, string> Lower-case names (the last value of a repeated header).
---@field body string

---Call an HTTP API through the host's transport (the only network a flow has), without blocking
---the host. Used by the hybrid (Queue-it KnownUser) flow for the protected API call.
---@param request wr.HttpRequest
---@return wr.HttpResponse|nil response
---@return string? message
---@return wr.Error? error
function wr.http(request) end

---Seconds since 1970 on the host's clock.
---@return number
function wr.now() end

---@class wr.json
wr.json = {}

---Stands for JSON null inside decoded arrays (objects just omit the key).
---@type lightuserdata
wr.json.null = nil

---Encode a value: tables with keys 1..n become arrays, others objects. Functions, coroutines,
---userdata, NaN, infinities, keys that are not strings or numbers, and tables nested more than
---64 deep (or in a cycle) are refused: nil and a message naming the path.
---@param value any
---@return string|nil json
---@return string? err
function wr.json.encode(value) end

---Decode JSON text (arrays and objects nested at most 64 deep).
---@param text string
---@return any value
---@return string? err
function wr.json.decode(text) end

-- ---------------------------------------------------------------------------------------------
-- Decisions: return one from a handler
-- ---------------------------------------------------------------------------------------------

---@class wr.Decision
---@field decision "retry"|"bypass"|"abort"
---@field after? number
---@field reason? string

---Run the entry again after `after` seconds (on on_error/on_block/on_close; on a waiting event it
---restarts the session). Bounded by the flow's max_retries (default 3); then the outcome stands.
---@param options { after?: number, reason?: string }|number
---@return wr.Decision
function wr.retry(options) end

---Let the user through without a pass (fail-open). FlowResult.outcome = bypassed(reason).
---A reason that is not a string (or nil) is an error.
---@param reason? string
---@return wr.Decision
function wr.bypass(reason) end

---Stop: the session is cancelled (a held key returned). FlowResult.outcome = aborted(reason).
---A reason that is not a string (or nil) is an error.
---@param reason? string
---@return wr.Decision
function wr.abort(reason) end

return wr
