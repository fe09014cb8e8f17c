"""The figures a run produced, each with its goal, and the final table."""

from dataclasses import dataclass


@dataclass
class Figure:
    section: str
    name: str
    value: str
    goal: str = ""
    met: object = None  # True, False, or None when the figure has no goal
    note: str = ""


class Results:
    def __init__(self):
        self.figures = []

    def add(self, section, name, value, goal="", met=None, note=""):
        self.figures.append(Figure(section, name, value, goal, met, note))

    def pending(self, section, why):
        self.add(section, "(section)", f"pending: {why}", "", None)

    def missed(self):
        return [f for f in self.figures if f.met is False]

    def table(self):
        rows = ["| section | figure | value | goal | met? |", "|---|---|---|---|---|"]
        for f in self.figures:
            met = {True: "yes", False: "**NO**", None: "-"}[f.met]
            value = f.value + (f" ({f.note})" if f.note else "")
            rows.append(f"| {f.section} | {f.name} | {value} | {f.goal or '-'} | {met} |")
        return "\n".join(rows)
