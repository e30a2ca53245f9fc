-- wrk body script: POST a minimal enqueue body (keep-alive is wrk's default).
wrk.method = "POST"
wrk.body = '{"userId":"bench-user","userAgent":"wrk/4 (bench)","sdkVersion":"wrk-bench-1"}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json"
