"""Chart images: SVG, and PNG at twice the size shown, from a chart's own toolbar.

Two actions in the toolbar of each chart tab (the roofline, Throughput vs B, Scaling, Compare) save the
chart as the page shows it: ``<chart>.svg`` and ``<chart>@2x.png`` (twice the width and height in pixels,
for slides and print), named without a prompt.  BokehJS draws the image from the chart's view
(``view.export("svg")``, what its own save tool calls; the view found through the ``index`` a
``CustomJS`` callback is given), and the PNG is that SVG drawn on a canvas at 2×.

Why the Export tab's switch "Draw the roofline as SVG" (``figure.output_backend = "svg"``) went: BokehJS
3.9 builds a plot view's canvas once, with the backend the figure has then, and reads no later change of
``output_backend``, so the toolbar's save kept saving PNG (at 1×, 557 × 540 by the prompt
"bokeh_plot"); and a chart on a tab not shown has no size (its view's box is 0 × 0 while the tab is taken
out of the layout), so whatever it exported was an empty SVG.  An action in the chart's own toolbar is
pressed while the chart is on screen, laid out and current (a hidden roofline is redrawn when its tab
opens: :attr:`app.roofline_view.RooflineView.shown`).
"""

from __future__ import annotations

from base64 import b64encode

from bokeh.models import CustomAction, CustomJS

from core.precision import get_precision

#: The PNG's pixels per CSS pixel of the chart shown.
PNG_SCALE = 2

#: Saves the chart named ``target`` (a figure or a grid of figures) as ``stem-<scenario>.svg`` or
#: ``stem-<scenario>@2x.png``, the scenario being a figure's title as a file name: its first line (model, GPU, phase)
#: and, from the lines after it, each bracket with levers in it ("(weights, B = 4, k = 1, p = INT4)"), so that batch 4,
#: INT4 and k = 4 of one model keep apart; a grid, which has no title, by its first tag (Compare's pins); ``stem`` alone
#: where there is neither.  Nothing while it has no size.
#: Named, not referenced: a reference from a figure's toolbar to its grid made every figure of the grid part of the
#: top one (``figure.select`` walks references), and present mode scaled their markers twice.
SAVE_IMAGE_JS = """
const fileStem = (chart, stem) => {
  // A grid has no title: its tags' first string names its scenario (Compare's pins).
  const title = chart.title != null && typeof chart.title.text === "string" ? chart.title.text
    : Array.isArray(chart.tags) && typeof chart.tags[0] === "string" ? chart.tags[0] : "";
  const lines = title.split("\\n");
  const levers = lines.slice(1).flatMap((line) => (line.match(/\\([^()]*=[^()]*\\)/g) || []));
  // Letters of any script (accents dropped), digits and a dot between them; any other run is one dash (8,192 is
  // 8192); at most 160 characters (not code units: a letter outside the BMP is not cut in two).
  const slug = Array.from([lines[0], ...levers].join(" ").replace(/(\\d),(?=\\d{3})/g, "$1").normalize("NFKD")
    .replace(/[\\u0300-\\u036f]/g, "").toLowerCase().replace(/[^\\p{L}\\p{N}.]+/gu, "-")
    .replace(/[-.]*-[-.]*/g, "-").replace(/\\.{2,}/g, ".").replace(/^[-.]+|[-.]+$/g, "")).slice(0, 160).join("")
    .replace(/[-.]+$/, "");
  return slug ? stem + "-" + slug : stem;
};
export default async ({target, kind, stem, scale}, obj, _data, {index}) => {
  const chart = obj.document == null ? null : obj.document.get_model_by_name(target);
  const view = chart == null ? null : index.find_one(chart);
  if (view == null || !(view.bbox.width > 0 && view.bbox.height > 0)) { return; }
  const base = fileStem(chart, stem);
  const svg = await view.export("svg", false).to_blob();
  let blob = svg, name = base + ".svg";
  if (kind === "png") {
    const url = URL.createObjectURL(svg);
    try {
      const img = new Image();
      await new Promise((ok, fail) => { img.onload = ok; img.onerror = fail; img.src = url; });
      const canvas = document.createElement("canvas");
      canvas.width = Math.round(scale * view.bbox.width);
      canvas.height = Math.round(scale * view.bbox.height);
      const ctx = canvas.getContext("2d");
      ctx.fillStyle = "white";
      ctx.fillRect(0, 0, canvas.width, canvas.height);
      ctx.drawImage(img, 0, 0, canvas.width, canvas.height);
      blob = await new Promise((ok) => canvas.toBlob(ok, "image/png"));
    } finally {
      URL.revokeObjectURL(url);
    }
    name = base + "@" + scale + "x.png";
  }
  const link = document.createElement("a");
  link.href = URL.createObjectURL(blob);
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 60000);
}
"""


def chart_levers(r, batch: bool = False) -> str:
    """The levers a chart's curves depend on, for its title's bracket: ``p = INT4, k = 4, S = 8,192`` (``B = 4, …``
    with ``batch``; the KV format where not BF16, "GQA off" where off).  A title says which scenario it is, and a
    saved image is named after it (:data:`SAVE_IMAGE_JS`): batch 4, INT4 and k = 4 keep apart."""
    kv = get_precision(r.kv_dtype).label
    return ((f"B = {r.batch:,}, " if batch else "") + f"p = {r.weight_format}, k = {r.spec_k}, S = {r.context:,}"
            + ("" if r.kv_dtype == "bf16" else f", KV {kv}") + ("" if r.gqa else ", GQA off"))


def _icon(text: str) -> str:
    """A toolbar icon: ``text`` in a rounded box, as an SVG data URL."""
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" width="24" height="24"><rect x="1" y="4" width="22" height="16" '
           'rx="3" fill="none" stroke="#444" stroke-width="1.5"/><text x="12" y="16" font-family="Helvetica, Arial, '
           f'sans-serif" font-size="9" font-weight="bold" text-anchor="middle" fill="#444">{text}</text></svg>')
    return "data:image/svg+xml;base64," + b64encode(svg.encode()).decode()


ICONS = {"svg": _icon("SVG"), "png": _icon(f"PNG{PNG_SCALE}×")}


def image_actions(target, stem: str) -> list[CustomAction]:
    """The two toolbar actions that save ``target`` (a figure, or a grid of them, by its ``name``, which must be
    set and unique in the document) as ``stem-<scenario>.svg`` and ``stem-<scenario>@2x.png``
    (:data:`SAVE_IMAGE_JS`), for a toolbar's ``add_tools``; the
    toolbar's own save tool is left out where these are.

    Raises:
        ValueError: ``target`` has no name.
    """
    if not target.name:
        raise ValueError(f"{target} has no name for its image actions to find it by")
    target = target.name
    return [
        CustomAction(description=f"Save as SVG ({stem}-….svg, named after the chart's scenario)", icon=ICONS["svg"],
                     callback=CustomJS(args={"target": target, "kind": "svg", "stem": stem, "scale": PNG_SCALE},
                                       code=SAVE_IMAGE_JS)),
        CustomAction(description=f"Save as PNG at {PNG_SCALE}× ({stem}-…@{PNG_SCALE}x.png)", icon=ICONS["png"],
                     callback=CustomJS(args={"target": target, "kind": "png", "stem": stem, "scale": PNG_SCALE},
                                       code=SAVE_IMAGE_JS)),
    ]
