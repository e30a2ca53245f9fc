#!/usr/bin/env python3
"""Drives the Cloudflare emulator's management API with Cloudflare's own Python SDK.

Usage: cloudflare_sdk_check.py BASE_URL   (e.g. http://127.0.0.1:PORT/client/v4)

Uses the `cloudflare` package from PyPI (installed by Scripts/setup into a venv; see
Vendors/Cloudflare/README.md "Management API (v4)"): creates rooms and an event, reads status
and event details, replaces and patches both, lists, uploads a page preview, sends bad input
and deletes. Prints one JSON object with what each step answered; the Swift test
(ManagementSDKTests.swift) asserts on it. Rooms `sdk_open` and `sdk_queue` are left in place
for the test to visit over HTTP.
"""
import datetime
import json
import sys

import cloudflare

ZONE = "023e105f4ecef8ad9ca31a8372d0c353"


def doc(model):
    return None if model is None else model.to_dict(mode="json")


def failure(call):
    """The status and body of a call expected to fail with an API status error."""
    try:
        call()
    except cloudflare.APIStatusError as e:
        return {"status": e.status_code, "body": e.body, "type": type(e).__name__}
    return {"status": None, "body": None, "type": "no error"}


def main():
    base_url = sys.argv[1]
    client = cloudflare.Cloudflare(api_token="any-token-the-emulator-ignores", base_url=base_url, max_retries=0)
    wr = client.waiting_rooms
    out = {"sdk_version": cloudflare.__version__}

    room = wr.create(zone_id=ZONE, name="sdk_shop", host="shop.example.com", path="/sdk-shop",
                     new_users_per_minute=200, total_active_users=300, description="made by the SDK",
                     json_response_enabled=True, cookie_attributes={"samesite": "strict", "secure": "always"})
    out["created"] = doc(room)
    out["got"] = doc(wr.get(room.id, zone_id=ZONE))
    out["status"] = doc(wr.statuses.get(room.id, zone_id=ZONE))

    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    iso = lambda d: d.strftime("%Y-%m-%dT%H:%M:%SZ")
    event = wr.events.create(room.id, zone_id=ZONE, name="launch", event_start_time=iso(now + datetime.timedelta(hours=1)),
                             event_end_time=iso(now + datetime.timedelta(hours=2)),
                             prequeue_start_time=iso(now + datetime.timedelta(minutes=30)), shuffle_at_event_start=True,
                             new_users_per_minute=400, total_active_users=500, description="the launch")
    out["event_created"] = doc(event)
    out["event_got"] = doc(wr.events.get(event.id, zone_id=ZONE, waiting_room_id=room.id))
    out["event_details"] = doc(wr.events.details.get(event.id, zone_id=ZONE, waiting_room_id=room.id))

    out["replaced"] = doc(wr.update(room.id, zone_id=ZONE, name="sdk_shop", host="shop.example.com", path="/sdk-shop",
                                    new_users_per_minute=250, total_active_users=350, session_duration=10))
    # the SDK sends the schema's required fields on PATCH too; the fields not given keep their values
    out["patched"] = doc(wr.edit(room.id, zone_id=ZONE, name="sdk_shop", host="shop.example.com", new_users_per_minute=250,
                                 total_active_users=350, description="patched", queueing_method="random"))
    start, end = iso(now + datetime.timedelta(hours=3)), iso(now + datetime.timedelta(hours=4))
    out["event_replaced"] = doc(wr.events.update(event.id, zone_id=ZONE, waiting_room_id=room.id, name="launch2",
                                                 event_start_time=start, event_end_time=end, description="replaced"))
    out["event_patched"] = doc(wr.events.edit(event.id, zone_id=ZONE, waiting_room_id=room.id, name="launch2",
                                              event_start_time=start, event_end_time=end, suspended=True,
                                              queueing_method="fifo"))
    out["events"] = [doc(e) for e in wr.events.list(room.id, zone_id=ZONE)]

    wr.create(zone_id=ZONE, name="sdk_open", host="shop.example.com", path="/sdk-open",
              new_users_per_minute=200, total_active_users=200, json_response_enabled=True)
    wr.create(zone_id=ZONE, name="sdk_queue", host="shop.example.com", path="/sdk-queue",
              new_users_per_minute=200, total_active_users=200, json_response_enabled=True, queue_all=True,
              queueing_status_code=202)
    out["rooms"] = [doc(r) for r in wr.list(zone_id=ZONE)]
    out["rooms_page_2_of_5"] = [doc(r) for r in wr.list(zone_id=ZONE, page=2, per_page=5).result]

    out["preview"] = doc(wr.page.preview(zone_id=ZONE, custom_html="<p>{{#waitTimeKnown}}{{waitTimeFormatted}}{{/waitTimeKnown}}</p>"))

    out["bad_create"] = failure(lambda: wr.create(zone_id=ZONE, name="bad name!", host="https://shop.example.com",
                                                  new_users_per_minute=10, total_active_users=200))
    out["bad_event"] = failure(lambda: wr.events.create(room.id, zone_id=ZONE, name="late",
                                                        event_start_time="tomorrow", event_end_time=iso(now)))

    out["event_deleted"] = doc(wr.events.delete(event.id, zone_id=ZONE, waiting_room_id=room.id))
    out["event_after_delete"] = failure(lambda: wr.events.get(event.id, zone_id=ZONE, waiting_room_id=room.id))
    out["deleted"] = doc(wr.delete(room.id, zone_id=ZONE))
    out["after_delete"] = failure(lambda: wr.get(room.id, zone_id=ZONE))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
