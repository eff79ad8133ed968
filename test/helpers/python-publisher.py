#!/usr/bin/env python3
"""An independent MQTT publisher that speaks the delegate seed's protocol, for interop tests.

It does what the seed's publish_event.py is documented to do: load <registry>/<job>.json, take the
exclusive fcntl.flock on <registry>/.lock, increment last_seq (and move the status) and write the
record back through a temp file and rename, then publish the seed's payload (schema_version 1, seq,
job_id, event, timestamp, detail, data) on <topic_prefix>/events with QoS 1, not retained.
It sends no token (the seed's PoC has auth_token null), so refinery accepts it only for --compat jobs.

Broker: MQTT_BROKER / MQTT_PORT when set, else the record's broker block.
Works with paho-mqtt 1.x (Debian's python3-paho-mqtt) and 2.x.

Usage: python-publisher.py --registry-dir DIR --job ID --event EVENT [--detail TEXT] [--repeat-seq]
       python-publisher.py --registry-dir DIR --hold-lock   (takes the lock, prints "locked",
                                                              releases it when stdin closes)
       python-publisher.py --registry-dir DIR --job ID --bump N   (N locked seq increments, prints them)
Exit codes: 0 published, 2 publish failure.
"""
import argparse
import fcntl
import json
import os
import sys
import tempfile
import time
from contextlib import contextmanager
from datetime import datetime, timezone

TERMINAL = ("completed", "error", "cancelled")


@contextmanager
def registry_lock(registry_dir):
    with open(os.path.join(registry_dir, ".lock"), "a") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def record_path(registry_dir, job_id):
    return os.path.join(registry_dir, job_id + ".json")


def write_atomic(path, record):
    fd, temp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".py-", suffix=".tmp")
    with os.fdopen(fd, "w") as handle:
        json.dump(record, handle, indent=2)
    os.replace(temp, path)


def next_seq(registry_dir, job_id, event):
    with registry_lock(registry_dir):
        with open(record_path(registry_dir, job_id)) as handle:
            record = json.load(handle)
        record["last_seq"] = int(record["last_seq"]) + 1
        if record["status"] not in TERMINAL:
            record["status"] = event if event in ("completed", "error") else "running"
        record["updated_at"] = now()
        write_atomic(record_path(registry_dir, job_id), record)
        return record


def now():
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def make_client(client_id):
    import paho.mqtt.client as mqtt

    if hasattr(mqtt, "CallbackAPIVersion"):
        return mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id, clean_session=True)
    return mqtt.Client(client_id=client_id, clean_session=True)


def publish(record, payload):
    host = os.environ.get("MQTT_BROKER") or record["broker"]["host"]
    port = int(os.environ.get("MQTT_PORT") or record["broker"]["port"])
    client = make_client("hermes-py-%d-%d" % (os.getpid(), int(time.time() * 1000) % 100000))
    client.connect(host, port, keepalive=30)
    client.loop_start()
    try:
        info = client.publish(record["topic_prefix"] + "/events", json.dumps(payload), qos=1, retain=False)
        info.wait_for_publish(timeout=10)
        if not info.is_published():
            raise RuntimeError("no PUBACK within 10 s")
    finally:
        client.disconnect()
        client.loop_stop()


def hold_lock(registry_dir):
    with registry_lock(registry_dir):
        print("locked", flush=True)
        sys.stdin.read()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--registry-dir", required=True)
    parser.add_argument("--job")
    parser.add_argument("--event", choices=["started", "permission_required", "progress", "completed", "error"])
    parser.add_argument("--detail", default="")
    parser.add_argument("--repeat-seq", action="store_true", help="publish the same payload twice (a QoS 1 duplicate)")
    parser.add_argument("--hold-lock", action="store_true")
    parser.add_argument("--bump", type=int, default=0)
    args = parser.parse_args()
    if args.hold_lock:
        hold_lock(args.registry_dir)
        return 0
    if args.bump:
        seqs = [next_seq(args.registry_dir, args.job, "progress")["last_seq"] for _ in range(args.bump)]
        print(json.dumps(seqs))
        return 0
    record = next_seq(args.registry_dir, args.job, args.event)
    payload = {
        "schema_version": 1,
        "seq": record["last_seq"],
        "job_id": args.job,
        "event": args.event,
        "timestamp": now(),
        "detail": args.detail,
        "data": {},
    }
    try:
        publish(record, payload)
        if args.repeat_seq:
            publish(record, payload)
    except Exception as error:  # noqa: BLE001 - the exit code is the contract
        print("publish failed: %s" % error, file=sys.stderr)
        return 2
    print("published seq=%d event=%s" % (payload["seq"], args.event))
    return 0


if __name__ == "__main__":
    sys.exit(main())
