import WaitingRoomEmulatorKit

/// The emulator's waiting page at `/{slug}`: a live page that polls the emulator's
/// `GET /v1/requests/{ch-id}` with `fetch()` (no reload) and shows position, people ahead and
/// behind, ETA, a progress bar and the room's message; on promotion it navigates to the target `url` with `ch-id`,
/// `ch-id-signature` and `ch-requested`, as the real waiting room does. No external assets.
enum CrowdHandlerWaitingPageHTML {
    /// The emulator kit's one HTML escape.
    static func escape(_ s: String) -> String { EmulatorHTTP.escapeHTML(s) }

    /// The page for `slug`; the query (`url`, `ch-id`, `ch-public-key`) is read by the script.
    static func page(slug: String, message: String = "", pollMs: Int = 2000) -> String {
        let s = escape(slug)
        return """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>Waiting room \(s)</title>
            <meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,">
            <style>
            body{font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;color:#1d2330}
            .bar{height:1.2rem;background:#e4e7ee;border-radius:.6rem;overflow:hidden}
            .fill{height:100%;width:0;background:#2f6fdb;transition:width .4s}
            dl{display:grid;grid-template-columns:auto 1fr;gap:.3rem 1rem} dt{font-weight:600}
            .message{background:#fff7e0;border-left:4px solid #e0a800;padding:.6rem .9rem;margin:0 0 1rem}
            </style></head>
            <body data-slug="\(s)">
            <h1>You are in the waiting room</h1>
            <p id="message" class="message"\(message.isEmpty ? " hidden" : "")>\(escape(message))</p>
            <p id="status" role="status" aria-live="polite">Checking your place in line…</p>
            <div class="bar" id="bar" role="progressbar" aria-label="Progress through the line" aria-valuemin="0" aria-valuemax="100" aria-valuenow="0"><div class="fill" id="fill"></div></div>
            <dl>
            <dt id="position-label">Your position</dt><dd id="position" aria-labelledby="position-label">–</dd>
            <dt id="ahead-label">People ahead of you</dt><dd id="ahead" aria-labelledby="ahead-label">–</dd>
            <dt id="behind-label">People behind you</dt><dd id="behind" aria-labelledby="behind-label">–</dd>
            <dt id="eta-label">Estimated wait</dt><dd id="eta" aria-labelledby="eta-label">–</dd>
            </dl>
            <script>
            (function(){
              var q=new URLSearchParams(location.search), slug=document.body.dataset.slug;
              var target=q.get('url')||'', token=q.get('ch-id')||'', key=q.get('ch-public-key')||'';
              var first=null;
              function set(id,v){document.getElementById(id).textContent=v;}
              function eta(s){if(s==null)return '–';if(s<60)return s+' s';return Math.ceil(s/60)+' min';}
              function go(r){
                var u;try{u=new URL(target,location.href);}catch(e){set('status','You are through, but the target URL is not valid.');return;}
                u.searchParams.set('ch-id',r.token||token);u.searchParams.set('ch-id-signature',r.hash||'');
                u.searchParams.set('ch-requested',r.requested||'');u.searchParams.set('ch-code','');
                set('status','It is your turn. Taking you there…');location.assign(u.toString());
              }
              function poll(){
                var path=token?('/v1/requests/'+encodeURIComponent(token)+'?url='+encodeURIComponent(target)):'/v1/requests';
                var init=token?{headers:{'x-api-key':key}}:{method:'POST',headers:{'x-api-key':key,'content-type':'application/json'},body:JSON.stringify({url:target,agent:navigator.userAgent,lang:navigator.language||'en'})};
                fetch(path,init).then(function(resp){return resp.json();}).then(function(body){
                  var r=body&&body.result||{};
                  if(r.token)token=r.token;
                  if(r.promoted===1||r.promoted===true){document.getElementById('fill').style.width='100%';document.getElementById('bar').setAttribute('aria-valuenow','100');go(r);return;}
                  if(r.error){set('status','The waiting room answered: '+r.error);setTimeout(poll,\(pollMs));return;}
                  var p=r.position||1;if(first==null||p>first)first=Number(r.firstPosition)||p;
                  var pct=first>0?Math.floor(100*(first-p)/first):0;
                  set('position',p);set('ahead',Math.max(0,p-1));set('behind',r.behind!=null?String(r.behind):'–');set('eta',eta(r.eta));
                  set('status','You are in line for '+slug+'. This page updates by itself.');
                  document.getElementById('fill').style.width=pct+'%';document.getElementById('bar').setAttribute('aria-valuenow',String(pct));
                  setTimeout(poll,\(pollMs));
                }).catch(function(){set('status','Reconnecting…');setTimeout(poll,\(pollMs));});
              }
              poll();
            })();
            </script>
            </body></html>
            """
    }

    /// The emulator's stand-in for the protected site (`/site/…`).
    static func site(path: String, token: String?) -> String {
        """
        <!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Protected page</title></head>
        <body><h1 id="through">You are through</h1><p>Page \(escape(path)), session \(escape(token ?? "none")).</p></body></html>
        """
    }
}
