"""What renderers know of plugins (render/ reads only result/): the form
of each in-tree plugin's details, as its declaration names it
(Declaration.details). A renderer words each form its own way, and shows
the details of any other plugin generically."""

from __future__ import annotations

# plugin name -> form, read from the declarations when first asked.
_FORMS: dict[str, str] | None = None


def details_form(plugin: str) -> str | None:
    global _FORMS
    if _FORMS is None:
        from ..plugins.registry import IN_TREE

        _FORMS = {d.name: d.details for d in IN_TREE if d.details}
    return _FORMS.get(plugin)
