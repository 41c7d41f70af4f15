"""Prices for a small shop: a percentage discount and the total of an order."""


def apply_discount(price: float, percent: float) -> float:
    """The price after taking `percent` per cent off: apply_discount(80.0, 25) == 60.0."""
    kept = 1 - percent / 100
    return round(kept, 2)


def order_total(lines: list[tuple[str, float, int]]) -> float:
    """The total of an order given as (item, unit price, quantity) lines."""
    return round(sum(price for _item, price, _quantity in lines), 2)
