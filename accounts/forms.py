from django import forms

from accounts.models import TOKEN_LIFETIME_MAX_DAYS, Team


class ApiTokenForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="What will use it, e.g. 'CI pipeline'.")
    team = forms.ModelChoiceField(queryset=Team.objects.none(), empty_label=None)
    expires_in_days = forms.IntegerField(
        min_value=1,
        max_value=TOKEN_LIFETIME_MAX_DAYS,
        initial=90,
        required=False,
        help_text=(
            f"1 to {TOKEN_LIFETIME_MAX_DAYS}; empty for a token that never expires, unless the"
            " team caps token lifetime."
        ),
    )

    def __init__(self, *args, teams, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["team"].queryset = teams
