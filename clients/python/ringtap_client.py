#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A ringtap client written from docs/PROTOCOL.md and proto/ringtap.proto alone.

It needs nothing but the Python module protoc makes of proto/ringtap.proto
(ringtap_pb2, on PYTHONPATH) and python3-protobuf. It speaks all three
encodings: DECODED records typed by their Schema, RAW pages parsed here from
the Welcome's Layout and each event's format text, FIXED records parsed from
the Schema's format text. Every record comes out as the same dict whatever
the encoding:

    {"ts": N, "cpu": N, "event": "system:name", "pid": N, "fields": {...}}

with integers as int, character arrays and strings as str, other arrays as
lists of int; a loss report comes where it arrived, as {"lost": N, "cpu": N,
"source": "kernel"}. Run it as a command for one JSON object per line:

    ringtap_client.py -s /run/ringtap/ringtapd.sock -e 'sched:*' --encoding raw

With --status it asks for the daemon's counters instead and prints the
Status as one JSON line.
"""

import argparse
import fnmatch
import json
import os
import re
import select
import socket
import sys

from google.protobuf import json_format

import ringtap_pb2 as pb

PROTOCOL_VERSION = 1
ENCODINGS = {"decoded": pb.DECODED, "raw": pb.RAW, "fixed": pb.FIXED}


class ProtocolError(Exception):
    """The daemon refused us, sent an Error, or sent bytes that are no Frame."""


# --- framing ---------------------------------------------------------------

def encode_varint(n):
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def decode_varint(buf, pos):
    """(value, next position), or None when buf ends inside the varint."""
    value = shift = 0
    while pos < len(buf):
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7
        if shift > 63:
            raise ProtocolError("frame length varint longer than 64 bits")
    return None


class Connection:
    """Frames in and out of one socket: a varint length, then a Frame."""

    MAX_FRAME = 16 << 20    # the most the daemon sends

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.buf = bytearray()
        self.closed = False

    def send(self, frame):
        data = frame.SerializeToString()
        self.sock.sendall(encode_varint(len(data)) + data)

    def next_frame(self, timeout=None):
        """The next Frame; None at the end of the stream or after timeout s."""
        while True:
            head = decode_varint(self.buf, 0)
            if head:
                length, start = head
                if length > self.MAX_FRAME:
                    raise ProtocolError("frame of %d bytes is over the limit" % length)
                if len(self.buf) >= start + length:
                    frame = pb.Frame()
                    frame.ParseFromString(bytes(self.buf[start:start + length]))
                    del self.buf[:start + length]
                    return frame
            if self.closed:
                if self.buf:
                    raise ProtocolError("the stream ends inside a frame")
                return None
            if timeout is not None and not select.select([self.sock], [], [], timeout)[0]:
                return None
            data = self.sock.recv(1 << 16)
            if not data:
                self.closed = True
            self.buf += data

    def close(self):
        self.sock.close()


# --- format texts ----------------------------------------------------------

FIELD_RE = re.compile(r"field:(?P<decl>[^;]*);\s*offset:(?P<offset>\d+);\s*"
                      r"size:(?P<size>\d+);\s*signed:(?P<signed>-?\d+);")


class FormatField:
    """One `field:` line of a format text, and how to read its value."""

    def __init__(self, decl, offset, size, signed):
        self.decl = decl.strip()
        self.offset = offset
        self.size = size
        self.signed = signed
        self.dynamic = None
        words = self.decl
        for kind in ("__data_loc", "__rel_loc"):
            if words.startswith(kind + " "):
                self.dynamic = kind
                words = words[len(kind) + 1:]
        # "TYPE NAME", "TYPE NAME[N]", "TYPE[] NAME" (dynamic), "TYPE NAME[]".
        match = re.match(r"(?P<type>.*?)\s*(?P<name>\w+)\s*(\[(?P<len>[^\]]*)\])?$", words)
        self.name = match.group("name")
        base = match.group("type")
        self.array = match.group(3) is not None or base.endswith("[]")
        self.base = base.replace("[]", "").strip()
        self.is_char = self.base in ("char", "unsigned char", "signed char", "const char")
        if self.array:
            length = match.group("len")
            elems = int(length, 0) if length and length.isdigit() else 0
            self.elem_size = (size // elems) if elems else (1 if self.is_char else size)
        else:
            self.elem_size = size

    def read(self, data, order):
        """The field's value from a record's bytes."""
        if self.dynamic:
            word = int.from_bytes(data[self.offset:self.offset + 4], order)
            start, length = word & 0xFFFF, word >> 16
            if self.dynamic == "__rel_loc":
                start += self.offset + self.size
            raw = data[start:start + length]
            return text(raw) if self.is_char else elements(raw, 1, self.signed, order)
        if self.array and self.size == 0:
            raw = data[self.offset:]         # a flexible array: the record's rest
        else:
            raw = data[self.offset:self.offset + self.size]
        if self.array:
            if self.is_char:
                return text(raw)
            return elements(raw, self.elem_size or 1, self.signed, order)
        return int.from_bytes(raw, order, signed=bool(self.signed))


def text(raw):
    """Characters up to the first NUL, as ringtapd's JSON spells them."""
    raw = bytes(raw).split(b"\0", 1)[0]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def elements(raw, size, signed, order):
    if size not in (1, 2, 4, 8):
        size = 1
    return [int.from_bytes(raw[i:i + size], order, signed=bool(signed))
            for i in range(0, len(raw) - size + 1, size)]


class Format:
    """An event's format text: its name, id, common and payload fields."""

    def __init__(self, text_):
        self.name = re.search(r"^name: (\S+)", text_, re.M).group(1)
        self.id = int(re.search(r"^ID: (\d+)", text_, re.M).group(1))
        self.common, self.fields = [], []
        in_payload = False
        for line in text_.splitlines():
            if not line.strip() and self.common:
                in_payload = True      # a blank line ends the common fields
            match = FIELD_RE.search(line)
            if match:
                field = FormatField(match.group("decl"), int(match.group("offset")),
                                    int(match.group("size")), int(match.group("signed")))
                (self.fields if in_payload else self.common).append(field)

    def common_value(self, data, name, order):
        for field in self.common:
            if field.name == name:
                return field.read(data, order)
        raise ProtocolError("format of %s has no %s" % (self.name, name))


# --- RAW pages -------------------------------------------------------------

class PageReader:
    """Sub-buffers as the kernel wrote them, parsed from the Welcome's Layout."""

    MISSED_EVENTS = 1 << 31    # the kernel's flags in the commit word
    MISSED_STORED = 1 << 30

    def __init__(self, layout):
        self.order = "big" if layout.big_endian else "little"
        self.long_size = layout.long_size
        page = {f.name: f for f in layout.page_fields}
        self.ts_field, self.commit_field, self.data_field = (
            page["timestamp"], page["commit"], page["data"])
        header = layout.header_event
        self.type_len_bits = int(re.search(r"type_len\s*:\s*(\d+) bits", header).group(1))
        self.delta_bits = int(re.search(r"time_delta\s*:\s*(\d+) bits", header).group(1))
        self.padding = int(re.search(r"padding\s*:\s*type == (\d+)", header).group(1))
        self.extend = int(re.search(r"time_extend\s*:\s*type == (\d+)", header).group(1))
        self.stamp = int(re.search(r"time_stamp\s*:\s*type == (\d+)", header).group(1))
        self.data_max = int(re.search(r"data max type_len\s*==\s*(\d+)", header).group(1))

    def _uint(self, buf, at, size):
        return int.from_bytes(buf[at:at + size], self.order)

    def records(self, page):
        """(timestamp, record bytes) of each event, and the events lost before the page
        (None: some, count unknown)."""
        base = self._uint(page, self.ts_field.offset, self.ts_field.size)
        commit = self._uint(page, self.commit_field.offset, self.commit_field.size)
        commit &= 0xFFFFFFFF     # only the low 32 bits carry meaning
        size = commit & ~(self.MISSED_EVENTS | self.MISSED_STORED)
        start = self.data_field.offset
        lost = 0
        if commit & self.MISSED_EVENTS:
            lost = None
            if commit & self.MISSED_STORED:
                lost = self._uint(page, start + size, self.long_size)
        data = page[start:start + size]
        out, pos, ts = [], 0, base
        mask = (1 << self.type_len_bits) - 1
        while pos + 4 <= len(data):
            word = self._uint(data, pos, 4)
            if self.order == "big":
                type_len, delta = word >> self.delta_bits, word & ((1 << self.delta_bits) - 1)
            else:
                type_len, delta = word & mask, word >> self.type_len_bits
            if type_len == self.padding:
                if pos + 8 > len(data):
                    break
                length = self._uint(data, pos + 4, 4)
                if pos + 4 + length >= len(data):
                    break              # the rest of the page is padding
                ts += delta            # a discarded event still moves time on
                pos += 4 + length
            elif type_len in (self.extend, self.stamp):
                if pos + 8 > len(data):
                    break
                value = (self._uint(data, pos + 4, 4) << self.delta_bits) + delta
                if type_len == self.stamp:
                    ts = value | (ts & (0xF8 << 56))
                else:
                    ts += value
                pos += 8
            elif type_len == 0:
                length = self._uint(data, pos + 4, 4) - 4
                ts += delta
                out.append((ts, data[pos + 8:pos + 8 + length]))
                pos += 8 + ((length + 3) & ~3)
            elif type_len <= self.data_max:
                ts += delta
                out.append((ts, data[pos + 4:pos + 4 + 4 * type_len]))
                pos += 4 + 4 * type_len
            else:
                raise ProtocolError("record type %d past the header's types" % type_len)
        return out, lost


# --- the client --------------------------------------------------------------

def selected(name, globs):
    """The protocol's glob meaning: system and event matched each on its own."""
    system, event = name.split(":", 1)
    for glob in globs:
        if ":" in glob:
            gsys, gev = glob.split(":", 1)
            if fnmatch.fnmatchcase(system, gsys) and fnmatch.fnmatchcase(event, gev):
                return True
        elif fnmatch.fnmatchcase(event, glob):
            return True
    return False


class Client:
    """One subscription: hello(), then events() until the stream ends."""

    def __init__(self, path):
        self.conn = Connection(path)
        self.welcome = None
        self.schemas = {}       # event_id -> Schema
        self.formats = {}       # event_id -> Format (RAW, FIXED)
        self.lost = 0
        self.ended_clean = False
        self.unknown = 0        # RAW records whose event never got a Schema

    def hello(self, events, encoding="decoded", client_name="ringtap-python", **sub):
        frame = pb.Frame()
        frame.hello.min_version = PROTOCOL_VERSION
        frame.hello.max_version = PROTOCOL_VERSION
        frame.hello.encodings.append(ENCODINGS[encoding])
        frame.hello.client_name = client_name
        frame.hello.subscription.events.extend(events)
        for key, value in sub.items():
            if isinstance(value, (list, tuple)):
                getattr(frame.hello.subscription, key).extend(value)
            else:
                setattr(frame.hello.subscription, key, value)
        self.globs = list(events)
        self.conn.send(frame)
        reply = self.conn.next_frame()
        if reply is None:
            raise ProtocolError("the daemon closed before answering the Hello")
        kind = reply.WhichOneof("msg")
        if kind == "refusal":
            raise ProtocolError("refused (%s): %s" % (
                pb.RefusalReason.Name(reply.refusal.reason), reply.refusal.text))
        if kind == "error":
            raise ProtocolError("error %d: %s" % (reply.error.code, reply.error.text))
        if kind != "welcome":
            raise ProtocolError("expected a Welcome, got %s" % kind)
        self.welcome = reply.welcome
        self.order = "big" if reply.welcome.layout.big_endian else "little"
        self.pages = PageReader(reply.welcome.layout)
        return self.welcome

    def status(self, client_name="ringtap-python"):
        """The daemon's counters: a Hello with status set, one Status frame back."""
        frame = pb.Frame()
        frame.hello.min_version = PROTOCOL_VERSION
        frame.hello.max_version = PROTOCOL_VERSION
        frame.hello.client_name = client_name
        frame.hello.status = True
        self.conn.send(frame)
        reply = self.conn.next_frame()
        if reply is None:
            raise ProtocolError("the daemon closed before answering the status request")
        kind = reply.WhichOneof("msg")
        if kind == "refusal":
            raise ProtocolError("refused (%s): %s" % (
                pb.RefusalReason.Name(reply.refusal.reason), reply.refusal.text))
        if kind != "status":
            raise ProtocolError("expected a Status, got %s" % kind)
        return reply.status

    def bye(self):
        frame = pb.Frame()
        frame.bye.SetInParent()
        self.conn.send(frame)

    def _schema(self, schema):
        self.schemas[schema.event_id] = schema
        if schema.HasField("format"):
            self.formats[schema.event_id] = Format(schema.format)

    def _decoded(self, batch):
        for rec in batch.records:
            schema = self.schemas[rec.event_id]
            fields = {}
            for field, value in zip(schema.fields, rec.fields):
                kind = value.WhichOneof("v")
                if kind == "raw":
                    size = field.size // field.array_len if field.array_len else 1
                    fields[field.name] = elements(value.raw, size, field.is_signed, self.order)
                else:
                    fields[field.name] = getattr(value, kind) if kind else None
            yield {"ts": rec.timestamp, "cpu": batch.cpu,
                   "event": schema.system + ":" + schema.name, "pid": rec.pid,
                   "fields": fields}

    def _record_from_bytes(self, ts, cpu, data, fmt, schema):
        return {"ts": ts, "cpu": cpu, "event": schema.system + ":" + schema.name,
                "pid": fmt.common_value(data, "common_pid", self.order),
                "fields": {f.name: f.read(data, self.order) for f in fmt.fields}}

    def _raw(self, pages):
        common = {f.name: f for f in self.welcome.layout.common_fields}
        type_field = common["common_type"]
        for page in pages.pages:
            records, _ = self.pages.records(page)
            for ts, data in records:
                event_id = int.from_bytes(
                    data[type_field.offset:type_field.offset + type_field.size], self.order)
                fmt = self.formats.get(event_id)
                if fmt is None:
                    self.unknown += 1
                    continue
                schema = self.schemas[event_id]
                # Pages carry every subscriber's events: keep ours.
                if selected(schema.system + ":" + schema.name, self.globs):
                    yield self._record_from_bytes(ts, pages.cpu, data, fmt, schema)

    def _fixed(self, fixed):
        for rec in fixed.records:
            # Every FIXED format describes the same legacy header: its common_type
            # names the record's event.
            any_format = next(iter(self.formats.values()))
            event_id = any_format.common_value(rec.data, "common_type", self.order)
            fmt = self.formats[event_id]
            yield self._record_from_bytes(rec.timestamp, fixed.cpu, rec.data, fmt,
                                          self.schemas[event_id])

    def events(self, timeout=None):
        """Records as dicts, until the daemon's Bye or the end of the stream; a
        loss report as {"lost": N, "cpu": N, "source": "kernel" or "queue"}."""
        while True:
            frame = self.conn.next_frame(timeout)
            if frame is None:
                return
            kind = frame.WhichOneof("msg")
            if kind == "schema":
                self._schema(frame.schema)
            elif kind == "batch":
                yield from self._decoded(frame.batch)
            elif kind == "pages":
                yield from self._raw(frame.pages)
            elif kind == "fixed":
                yield from self._fixed(frame.fixed)
            elif kind == "lost":
                self.lost += frame.lost.count
                yield {"lost": frame.lost.count, "cpu": frame.lost.cpu,
                       "source": pb.LossSource.Name(frame.lost.source).lower()}
            elif kind == "bye":
                self.ended_clean = True
            elif kind == "error":
                raise ProtocolError("error %d: %s" % (frame.error.code, frame.error.text))

    def close(self):
        self.conn.close()


def main(argv=None):
    parser = argparse.ArgumentParser(description="Subscribe to ringtapd; one JSON record a line.")
    parser.add_argument("-s", "--socket", default="/run/ringtap/ringtapd.sock")
    parser.add_argument("-e", "--events", default="ringtap_test:*",
                        help="comma-separated system:event globs")
    parser.add_argument("--encoding", choices=sorted(ENCODINGS), default="decoded")
    parser.add_argument("-n", "--count", type=int, default=0, help="stop after N records")
    parser.add_argument("--status", action="store_true",
                        help="print the daemon's counters as one JSON line instead")
    args = parser.parse_args(argv)
    client = Client(args.socket)
    if args.status:
        try:
            st = client.status()
        except ProtocolError as err:
            print("ringtap_client: %s" % err, file=sys.stderr)
            return 1
        finally:
            client.close()
        print(json.dumps(json_format.MessageToDict(st, preserving_proto_field_name=True),
                         separators=(",", ":")))
        return 0
    n = 0
    try:
        client.hello(args.events.split(","), args.encoding)
        for record in client.events():
            print(json.dumps(record, separators=(",", ":")))
            n += "event" in record
            if args.count and n >= args.count:
                break
    except ProtocolError as err:
        print("ringtap_client: %s" % err, file=sys.stderr)
        return 1
    finally:
        client.close()
    print("ringtap_client: %d records, %d lost, %d without a format, %s" % (
        n, client.lost, client.unknown, "ended by the daemon" if client.ended_clean else "cut"),
        file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
