"""hwc report --flamegraph, looked at in headless Chromium: the screenshot
shows f2's frame in its colour where the SVG puts it, about three times as
wide as f1's (the workload's 1:3 split); hovering names a frame with its
share and clicking zooms it to the full width (real mouse events sent to the
SVG's own handlers in the browser, the result read back with --dump-dom)."""
import json
import os
import re
import shutil
import struct
import subprocess
import tempfile
import unittest
import zlib

BUILD = os.environ.get("HWC_BUILD", os.path.join(os.path.dirname(__file__), "..", "build"))
HWC = os.path.join(BUILD, "bin", "hwc")
HOTSPOTS = os.path.join(BUILD, "workloads", "hotspots")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def read_png(path):
    """(width, height, rows of (r, g, b)) of an 8-bit RGB/RGBA PNG."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and ctype in (2, 6) and interlace == 0, (depth, ctype, interlace)
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(width)])
        prev = line
    return width, height, rows


def chromium(tmp, *args):
    profile = tempfile.mkdtemp(dir=tmp)
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--hide-scrollbars", "--force-device-scale-factor=1", "--user-data-dir=" + profile, *args]
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=180)


class FlameGraph(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not CHROMIUM:
            raise unittest.SkipTest("chromium is not installed (scripts/deps installs it)")
        if not shutil.which("perf"):
            raise unittest.SkipTest("perf is not installed")
        cls.tmp = tempfile.mkdtemp(prefix="hwc-flame-")
        cls.rec = os.path.join(cls.tmp, "fp.data")
        p = subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", "2000", "-g", "-o", cls.rec,
                            HOTSPOTS, "20"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if p.returncode:
            raise unittest.SkipTest("perf record failed: " + p.stderr)
        cls.svg = os.path.join(cls.tmp, "flame.svg")
        subprocess.run([HWC, "report", "--flamegraph", cls.svg, cls.rec], check=True)
        with open(cls.svg) as f:
            cls.text = f.read()
        cls.doc = json.loads(subprocess.run([HWC, "report", "--json", "--sort", "symbol", cls.rec],
                                            stdout=subprocess.PIPE, check=True).stdout)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def frame(self, name):
        """The widest frame of that name: the one under g. A sample taken in a
        function's prologue, before it pushed its frame pointer, skips g in
        the frame-pointer chain and adds a thin f1 or f2 one row lower."""
        found = re.findall(r'<title>%s \((\d+) samples, ([\d.]+)%%\)</title><rect x="([\d.]+)" y="([\d.]+)" '
                           r'width="([\d.]+)" height="(\d+)" fill="rgb\((\d+),(\d+),(\d+)\)"' % re.escape(name),
                           self.text)
        self.assertTrue(found, name)
        g = max(found, key=lambda f: float(f[4]))
        return {"x": float(g[2]), "y": float(g[3]), "w": float(g[4]), "h": int(g[5]),
                "rgb": (int(g[6]), int(g[7]), int(g[8])), "pct": float(g[1])}

    def test_screenshot_shows_f2_three_times_f1(self):
        height = int(re.search(r'<svg[^>]* height="(\d+)"', self.text).group(1))
        shot = os.path.join(self.tmp, "shot.png")
        p = chromium(self.tmp, "--window-size=1200,%d" % height, "--screenshot=" + shot,
                     "file://" + self.svg)
        self.assertTrue(os.path.exists(shot), p.stderr)
        width, _, rows = read_png(shot)
        self.assertEqual(width, 1200)
        f1, f2 = self.frame("f1"), self.frame("f2")
        self.assertNotEqual(f1["rgb"], f2["rgb"])
        # Both frames sit on the same row (callees of g); sample just inside the top edge.
        self.assertEqual(f1["y"], f2["y"])
        row = rows[int(f2["y"]) + 1]
        self.assertEqual(row[int(f2["x"] + f2["w"] / 2)], f2["rgb"])
        self.assertEqual(row[int(f1["x"] + f1["w"] / 2)], f1["rgb"])
        w1 = sum(1 for px in row if px == f1["rgb"])
        w2 = sum(1 for px in row if px == f2["rgb"])
        entries = {e["symbol"]: e for e in self.doc["entries"]}
        expected = entries["f2"]["children"] / entries["f1"]["children"]
        self.assertAlmostEqual(w2 / w1, expected, delta=expected * 0.05, msg=(w1, w2))
        self.assertAlmostEqual(w2 / w1, 3.0, delta=0.6)

    def test_hover_and_click(self):
        svg = self.text.split("?>", 1)[1]
        probe = """<script>
        window.addEventListener('load', function () { setTimeout(function () {
          var frames = document.querySelectorAll('g.f'), f1 = null, f2 = null;
          function width(g) { return g ? +g.getElementsByTagName('rect')[0].getAttribute('width') : -1; }
          frames.forEach(function (g) {  // the widest of each name (see frame())
            var t = g.getElementsByTagName('title')[0].textContent;
            if (/^f1 \\(/.test(t) && width(g) > width(f1)) f1 = g;
            if (/^f2 \\(/.test(t) && width(g) > width(f2)) f2 = g;
          });
          var res = {};
          f1.dispatchEvent(new MouseEvent('mouseover', {bubbles: true}));
          res.hover = document.getElementById('details').textContent;
          f1.dispatchEvent(new MouseEvent('click', {bubbles: true}));
          res.f1_width = +f1.getElementsByTagName('rect')[0].getAttribute('width');
          res.f2_hidden = f2.style.display === 'none';
          res.f1_label = f1.getElementsByTagName('text')[0].textContent;
          document.getElementById('unzoom').dispatchEvent(new MouseEvent('click', {bubbles: true}));
          res.f2_back = f2.style.display !== 'none';
          document.body.setAttribute('data-result', JSON.stringify(res));
        }, 0); });
        </script>"""
        page = os.path.join(self.tmp, "probe.html")
        with open(page, "w") as f:
            f.write("<!DOCTYPE html><html><body style='margin:0'>" + svg + probe + "</body></html>")
        p = chromium(self.tmp, "--virtual-time-budget=5000", "--dump-dom", "file://" + page)
        m = re.search(r"data-result=\"([^\"]*)\"", p.stdout)
        self.assertTrue(m, p.stdout[-2000:] + p.stderr)
        res = json.loads(m.group(1).replace("&quot;", '"'))
        self.assertRegex(res["hover"], r"^f1 \(\d+ samples, [\d.]+%\)$")
        self.assertAlmostEqual(res["f1_width"], 1200, delta=0.5)
        self.assertTrue(res["f2_hidden"])
        self.assertEqual(res["f1_label"], "f1")
        self.assertTrue(res["f2_back"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
