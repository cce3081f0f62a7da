"""SVG plots of bench/run.py's results, with no dependency beyond Python: the member curve
against its floors (log-log), and the cold and warm installs against their baselines (bars).

bench/run.py --plot DIR writes DIR/members.json and DIR/install.json as its suites finish and
draws DIR/members.svg and DIR/install.svg from them; --replot DIR draws again from the JSON.
"""

import json
import math
import os

W, H = 720, 420
LEFT, RIGHT, TOP, BOTTOM = 70, 190, 40, 60
COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#7f7f7f", "#9467bd", "#ff7f0e"]
FONT = 'font-family="sans-serif" font-size="12"'


def _svg(title, body):
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}">\n'
            f'<rect width="{W}" height="{H}" fill="white"/>\n'
            f'<text x="{W / 2}" y="22" text-anchor="middle" font-family="sans-serif" font-size="15">{title}</text>\n'
            + "".join(body) + "</svg>\n")


def _ticks(lo, hi):
    """Powers of ten and their 2x and 5x between lo and hi (a log axis)."""
    out, e = [], math.floor(math.log10(lo))
    while 10 ** e <= hi * 10:
        for m in (1, 2, 5):
            v = m * 10 ** e
            if lo <= v <= hi:
                out.append(v)
        e += 1
    return out


def _label(v, unit):
    if unit == "ms" and v < 1:
        return f"{v:g} ms"
    return f"{v:,.0f} {unit}".strip() if v >= 1 else f"{v:g} {unit}".strip()


def lines(title, xlabel, ylabel, series, path):
    """A log-log line chart: series is [(name, [(x, y), ...])], every x and y > 0."""
    xs = [x for _, pts in series for x, _ in pts]
    ys = [y for _, pts in series for _, y in pts]
    x0, x1 = min(xs) / 1.2, max(xs) * 1.2
    y0, y1 = min(ys) / 1.5, max(ys) * 1.5
    px = lambda x: LEFT + (math.log(x) - math.log(x0)) / (math.log(x1) - math.log(x0)) * (W - LEFT - RIGHT)
    py = lambda y: H - BOTTOM - (math.log(y) - math.log(y0)) / (math.log(y1) - math.log(y0)) * (H - TOP - BOTTOM)
    body = [f'<rect x="{LEFT}" y="{TOP}" width="{W - LEFT - RIGHT}" height="{H - TOP - BOTTOM}" fill="none" stroke="#999"/>\n']
    for y in _ticks(y0, y1):
        body.append(f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{py(y):.1f}" y2="{py(y):.1f}" stroke="#eee"/>'
                    f'<text x="{LEFT - 6}" y="{py(y) + 4:.1f}" text-anchor="end" {FONT}>{_label(y, "ms")}</text>\n')
    for x in sorted(set(xs)):
        body.append(f'<line x1="{px(x):.1f}" x2="{px(x):.1f}" y1="{TOP}" y2="{H - BOTTOM}" stroke="#eee"/>'
                    f'<text x="{px(x):.1f}" y="{H - BOTTOM + 16}" text-anchor="middle" {FONT}>{x:,}</text>\n')
    body.append(f'<text x="{(LEFT + W - RIGHT) / 2}" y="{H - 18}" text-anchor="middle" {FONT}>{xlabel}</text>\n')
    body.append(f'<text x="16" y="{(TOP + H - BOTTOM) / 2}" text-anchor="middle" {FONT} '
                f'transform="rotate(-90 16 {(TOP + H - BOTTOM) / 2})">{ylabel}</text>\n')
    for i, (name, pts) in enumerate(series):
        colour = COLOURS[i % len(COLOURS)]
        dash = ' stroke-dasharray="5 4"' if "floor" in name else ""
        d = " ".join(f"{'M' if j == 0 else 'L'}{px(x):.1f},{py(y):.1f}" for j, (x, y) in enumerate(sorted(pts)))
        body.append(f'<path d="{d}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>\n')
        for x, y in pts:
            body.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{colour}"/>\n')
        ly = TOP + 14 + i * 20
        body.append(f'<line x1="{W - RIGHT + 12}" x2="{W - RIGHT + 36}" y1="{ly - 4}" y2="{ly - 4}" '
                    f'stroke="{colour}" stroke-width="2"{dash}/>'
                    f'<text x="{W - RIGHT + 42}" y="{ly}" {FONT}>{name}</text>\n')
    with open(path, "w") as f:
        f.write(_svg(title, body))


def bars(title, ylabel, groups, path):
    """Grouped bars: groups is [(group name, [(bar name, value in ms), ...])]."""
    top = max(v for _, bs in groups for _, v in bs) * 1.15
    inner = W - LEFT - RIGHT
    gw = inner / len(groups)
    py = lambda v: H - BOTTOM - v / top * (H - TOP - BOTTOM)
    body = [f'<rect x="{LEFT}" y="{TOP}" width="{inner}" height="{H - TOP - BOTTOM}" fill="none" stroke="#999"/>\n']
    step = 10 ** math.floor(math.log10(top / 2))
    step *= 5 if top / step > 10 else 1
    v = 0
    while v <= top:
        body.append(f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{py(v):.1f}" y2="{py(v):.1f}" stroke="#eee"/>'
                    f'<text x="{LEFT - 6}" y="{py(v) + 4:.1f}" text-anchor="end" {FONT}>{v:,.0f} ms</text>\n')
        v += step
    body.append(f'<text x="16" y="{(TOP + H - BOTTOM) / 2}" text-anchor="middle" {FONT} '
                f'transform="rotate(-90 16 {(TOP + H - BOTTOM) / 2})">{ylabel}</text>\n')
    names = []
    for g, (group, bs) in enumerate(groups):
        bw = gw * 0.8 / len(bs)
        for b, (name, value) in enumerate(bs):
            if name not in names:
                names.append(name)
            colour = COLOURS[names.index(name) % len(COLOURS)]
            x = LEFT + g * gw + gw * 0.1 + b * bw
            body.append(f'<rect x="{x:.1f}" y="{py(value):.1f}" width="{bw - 4:.1f}" height="{py(0) - py(value):.1f}" fill="{colour}"/>'
                        f'<text x="{x + (bw - 4) / 2:.1f}" y="{py(value) - 4:.1f}" text-anchor="middle" {FONT}>{value:,.0f}</text>\n')
        body.append(f'<text x="{LEFT + g * gw + gw / 2:.1f}" y="{H - BOTTOM + 18}" text-anchor="middle" {FONT}>{group}</text>\n')
    for i, name in enumerate(names):
        ly = TOP + 14 + i * 20
        body.append(f'<rect x="{W - RIGHT + 12}" y="{ly - 10}" width="24" height="10" fill="{COLOURS[i % len(COLOURS)]}"/>'
                    f'<text x="{W - RIGHT + 42}" y="{ly}" {FONT}>{name}</text>\n')
    with open(path, "w") as f:
        f.write(_svg(title, body))


def save(directory, name, results):
    """Writes DIR/NAME.json and draws what it can from every result file in DIR."""
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, f"{name}.json"), "w") as f:
        json.dump(results, f, indent=2)
        f.write("\n")
    draw(directory)


def draw(directory):
    """DIR/members.svg from DIR/members.json, DIR/install.svg from DIR/install.json."""
    members = os.path.join(directory, "members.json")
    if os.path.isfile(members):
        rows = json.load(open(members))["rows"]
        series = [("no-op install", [(r["members"], r["noop_ms"]) for r in rows]),
                  ("doctor", [(r["members"], r["doctor_ms"]) for r in rows]),
                  ("5-stat floor", [(r["members"], r["floor5_ms"]) for r in rows]),
                  ("1-stat floor", [(r["members"], r["floor_ms"]) for r in rows])]
        if all("baseline_noop_ms" in r for r in rows):
            series.append(("baseline no-op", [(r["members"], r["baseline_noop_ms"]) for r in rows]))
        lines("The member curve: no-op install and doctor against their floors",
              "members of the superbuild", "median wall time", series,
              os.path.join(directory, "members.svg"))
    install = os.path.join(directory, "install.json")
    if os.path.isfile(install):
        r = json.load(open(install))
        cold = [("a2c", r["cold_ms"]), ("shell script", r["script_ms"]), ("write floor", r["floor_ms"])]
        warm = [("a2c", r["warm_ms"]), ("cp -al", r["cp_al_ms"])]
        if "baseline_cold_ms" in r:
            cold.append(("baseline a2c", r["baseline_cold_ms"]))
        if "baseline_warm_ms" in r:
            warm.append(("baseline a2c", r["baseline_warm_ms"]))
        bars("Installing 10 versions x 3,000 files: cold and warm against their baselines",
             "median wall time",
             [("cold (empty store and cache)", cold), ("warm (tree cache filled)", warm)],
             os.path.join(directory, "install.svg"))
