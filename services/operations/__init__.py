"""Operations: how the instance's readers stand, what they parked, the scheduler's orders."""
