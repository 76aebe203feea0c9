"""A small SVG canvas on :mod:`xml.etree.ElementTree`: elements carry a ``class`` (what they
show) so that a test, or a stylesheet, can find them; text is escaped by ElementTree."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from pathlib import Path

NS = "http://www.w3.org/2000/svg"
FONT = "font-family:monospace;font-size:12px"


class Canvas:
    def __init__(self, width: int, height: int, title: str) -> None:
        self.root = ET.Element(
            "svg",
            {
                "xmlns": NS,
                "width": str(width),
                "height": str(height),
                "viewBox": f"0 0 {width} {height}",
            },
        )
        ET.SubElement(self.root, "title").text = title
        ET.SubElement(self.root, "rect", {"width": "100%", "height": "100%", "fill": "white"})

    def add(self, tag: str, cls: str, text: str | None = None, **attrs: object) -> ET.Element:
        el = ET.SubElement(
            self.root,
            tag,
            {"class": cls, **{k.replace("_", "-"): _fmt(v) for k, v in attrs.items()}},
        )
        if text is not None:
            el.text = text
        return el

    def text(self, cls: str, x: float, y: float, text: str, anchor: str = "start") -> ET.Element:
        return self.add("text", cls, text, x=x, y=y, style=FONT, text_anchor=anchor)

    def line(self, cls: str, x1: float, y1: float, x2: float, y2: float, **attrs: object) -> None:
        self.add("line", cls, None, x1=x1, y1=y1, x2=x2, y2=y2, **attrs)

    def to_bytes(self) -> bytes:
        data: bytes = ET.tostring(self.root, encoding="utf-8", xml_declaration=True)
        return data

    def write(self, path: Path) -> None:
        """Written whole to a temporary name, then renamed."""
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_bytes(self.to_bytes())
        os.replace(tmp, path)


def _fmt(value: object) -> str:
    return f"{value:.1f}" if isinstance(value, float) else str(value)
