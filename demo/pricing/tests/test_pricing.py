import unittest

from pricing import apply_discount, order_total


class DiscountTest(unittest.TestCase):
    def test_discount_reduces_the_price(self):
        self.assertEqual(apply_discount(80.0, 25), 60.0)

    def test_no_discount_keeps_the_price(self):
        self.assertEqual(apply_discount(19.99, 0), 19.99)


class TotalTest(unittest.TestCase):
    def test_total_counts_quantities(self):
        self.assertEqual(order_total([("pen", 2.5, 4), ("pad", 3.0, 1)]), 13.0)

    def test_empty_order_costs_nothing(self):
        self.assertEqual(order_total([]), 0)


if __name__ == "__main__":
    unittest.main()
